import { pino } from 'pino';
import { createClients } from '../core/aws.js';
import { loadConfig } from '../core/config.js';
import { createQueues } from '../core/queues.js';
import { ensureResources } from '../core/resources.js';
import { tableOf } from '../core/store/table.js';
import { startEmulators } from '../infra/local/emulators.js';
import { sandboxControl } from '../test/e2e/support/sandbox-control.js';
import { startSandboxProcess } from './sandbox-process.js';

const silent = pino({ level: 'silent' });

/**
 * What a benchmark on the sandbox starts first: the emulators in this process, the sandbox in a
 * process of its own, the table, bucket and queues, and clients of each. `env` points a
 * connector or gateway process at both (with `extraEnv`, e.g. WEBHOOK_ALLOW_PRIVATE).
 */
export async function startSandboxStack(extraEnv: Record<string, string> = {}) {
  const emulators = await startEmulators();
  const sandbox = await startSandboxProcess();
  // Unpaced accounts unless a bench asks (docs/sending.md#paced-sends): benches measure other things.
  const env = { ...emulators.env, ...sandbox.env, SEND_PACING_DEFAULT: 'off', ...extraEnv };
  const config = loadConfig({ ...env, LOG_LEVEL: 'silent' });
  const clients = createClients(config);
  await ensureResources(config, clients, silent);
  return {
    emulators,
    sandbox,
    env,
    config,
    clients,
    table: tableOf(config, clients),
    queues: createQueues(config, clients, silent),
    control: sandboxControl(sandbox.descriptor.controlUrl),
  };
}
