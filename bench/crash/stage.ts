/**
 * What every scenario of the crash bench shares: one sandbox network (in this process, in
 * memory: it is the outside world, it never crashes), a temporary directory holding one data
 * directory and log file per gateway, fresh phone numbers, and linking an account through the
 * API the way a user does (create it, read the QR from the gateway's log, scan it with the
 * sandbox phone).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startSandbox, type RunningSandbox } from '../../sandbox/index.js';
import { sandboxControl, type SandboxControl } from '../../test/e2e/support/sandbox-control.js';
import { freePort, startGatewayProcess, type GatewayHome, type GatewayProcess } from './gateway-process.js';
import type { CrashOptions } from './options.js';
import { poll } from './poll.js';
import { restClient, type RestClient } from './rest-client.js';

const LINK_TIMEOUT_MS = 180_000;

export interface Stage {
  options: CrashOptions;
  control: SandboxControl;
  /** A new phone number on the sandbox network. */
  newPhone(): Promise<string>;
  /** A data directory, port and log file for a new gateway (`name` names the files). */
  newHome(name: string): Promise<GatewayHome>;
  stop(): Promise<void>;
}

/** A running gateway with its REST client. */
export interface RunningGateway {
  home: GatewayHome;
  process: GatewayProcess;
  rest: RestClient;
}

export async function createStage(options: CrashOptions): Promise<Stage> {
  const sandbox: RunningSandbox = await startSandbox({ port: 0, logger: pino({ level: 'silent' }) });
  const root = await mkdtemp(join(tmpdir(), 'bench-crash-'));
  const control = sandboxControl(sandbox.descriptor.controlUrl);
  const networkEnv = {
    WA_WS_URL: sandbox.descriptor.wsUrl,
    WA_ROOT_PUBLIC_KEY: sandbox.descriptor.rootPublicKey,
    WA_MEDIA_CA_FILE: sandbox.descriptor.mediaCaFile,
  };
  let phones = 0;
  return {
    options,
    control,
    async newPhone() {
      const phone = String(15_557_000_000 + phones++);
      await control.createPhone(phone);
      return phone;
    },
    async newHome(name) {
      const dataDir = join(root, name);
      await mkdir(dataDir, { recursive: true });
      return { dataDir, port: await freePort(), logFile: join(root, `${name}.log`), networkEnv, logLevel: options.logLevel };
    },
    async stop() {
      await sandbox.stop();
      if (options.keepData) console.log(`gateway data and logs kept in ${root}`);
      else await rm(root, { recursive: true, force: true });
    },
  };
}

export async function startGateway(home: GatewayHome): Promise<RunningGateway> {
  const started = await startGatewayProcess(home);
  return { home, process: started, rest: restClient(started.apiUrl) };
}

/** The same gateway again on its data (after a kill or a stop). */
export const restartGateway = (gateway: RunningGateway) => startGateway(gateway.home);

/** Creates the account through the API, scans its QR with `phone`, waits for `connected`. */
export async function linkAccount(stage: Stage, gateway: RunningGateway, accountId: string, phone: string): Promise<void> {
  const from = gateway.process.lines.length;
  await gateway.rest.createAccount(accountId);
  const qr = await gateway.process.waitForQr(accountId, from);
  await stage.control.scan(phone, qr);
  await poll(
    `${accountId} to be connected`,
    async () => {
      if (!gateway.process.isRunning()) throw new Error('the gateway exited while linking');
      return (await gateway.rest.currentStatus(accountId)) === 'connected';
    },
    { timeoutMs: LINK_TIMEOUT_MS, intervalMs: 250 },
  );
}

/** A gateway with one account linked to a new phone, and a second phone to talk to it. */
export async function gatewayWithAccount(stage: Stage, name: string) {
  const gateway = await startGateway(await stage.newHome(name));
  try {
    const accountPhone = await stage.newPhone();
    const peerPhone = await stage.newPhone();
    const accountId = name.replace(/[^A-Za-z0-9]/g, '');
    await linkAccount(stage, gateway, accountId, accountPhone);
    return { gateway, accountId, accountPhone, peerPhone };
  } catch (error) {
    await gateway.process.kill();
    throw error;
  }
}
