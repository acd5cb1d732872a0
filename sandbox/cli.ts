import { resolve } from 'node:path';
import { startSandbox } from './index.js';

/**
 * `npm run sandbox`: runs the network in the foreground and prints its descriptor.
 * SANDBOX_PORT / SANDBOX_CONTROL_PORT / SANDBOX_MEDIA_PORT (0 = any free port; unset = the
 * ports of the previous run when they are free, else any) and
 * DATA_DIR (default ./data): state in DATA_DIR/sandbox/, the descriptor in DATA_DIR/sandbox.json
 * (SANDBOX_IN_MEMORY=1 keeps nothing on disk). SANDBOX_ADDRESSING=lid delivers LID-addressed.
 */
const port = (name: string) => {
  const value = Number(process.env[name]);
  if (!Number.isInteger(value) || value < 0 || value > 65535) throw new Error(`${name} must be a port number`);
  return value;
};

const inMemory = process.env.SANDBOX_IN_MEMORY === '1';
const baseDir = resolve(process.env.DATA_DIR ?? './data');
const dataDir = inMemory ? undefined : resolve(baseDir, 'sandbox');
const descriptorFile = inMemory ? undefined : resolve(baseDir, 'sandbox.json');
const portsGiven = ['SANDBOX_PORT', 'SANDBOX_CONTROL_PORT', 'SANDBOX_MEDIA_PORT'].some((name) => process.env[name]);
const sandbox = await startSandbox({
  descriptorFile,
  port: process.env.SANDBOX_PORT ? port('SANDBOX_PORT') : undefined,
  controlPort: process.env.SANDBOX_CONTROL_PORT ? port('SANDBOX_CONTROL_PORT') : undefined,
  mediaPort: process.env.SANDBOX_MEDIA_PORT ? port('SANDBOX_MEDIA_PORT') : undefined,
  // Without explicit ports, a restart keeps the previous ones (the gateway's WA_WS_URL stays valid).
  reusePorts: !portsGiven,
  addressing: process.env.SANDBOX_ADDRESSING === 'lid' ? 'lid' : 'pn',
  dataDir,
});
const { descriptor } = sandbox;
process.stdout.write(`${JSON.stringify(descriptor)}\n`);
process.stdout.write(
  [
    `# sandbox WhatsApp network running${dataDir ? ` (state in ${dataDir})` : ' (in memory)'}; point the gateway at it with:`,
    `WA_WS_URL=${descriptor.wsUrl}`,
    `WA_ROOT_PUBLIC_KEY=${descriptor.rootPublicKey}`,
    `WA_MEDIA_CA_FILE=${descriptor.mediaCaFile}`,
    `WA_VERSION_URL=${descriptor.versionUrl}`,
    `# control API: ${descriptor.controlUrl}`,
    '',
  ].join('\n'),
);

let stopping = false;
const shutdown = () => {
  if (stopping) return;
  stopping = true;
  sandbox.stop().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`sandbox stop failed: ${String(err)}\n`);
      process.exit(1);
    },
  );
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
