import { afterAll, beforeAll } from 'vitest';
import { createClients, destroyClients, type AwsClients } from '../../core/aws.js';
import { loadConfig, type Config } from '../../core/config.js';
import { createQueues, type Queues } from '../../core/queues.js';
import { ensureResources } from '../../core/resources.js';
import { tableOf, type Table } from '../../core/store/table.js';
import { startEmulators, type Emulators } from '../../infra/local/emulators.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { pino } from 'pino';

export interface TestStack {
  config: Config;
  clients: AwsClients;
  /** The emulators' env (endpoints, region, dummy credentials), WEBHOOK_ALLOW_PRIVATE, COMMAND_SHARDS and SEND_PACING_DEFAULT, for child processes. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Emulators on free ports (in a temp dir unless `dataDir` is given), SDK clients pointing at
 * them, and the table, bucket and queues created. `overrides` go into the config (e.g.
 * SEND_TIMEOUT_MS). `separateProcess` runs the emulators in a child process (for memory
 * measurements of this one). Nothing touches process.env. Call `stop()` in afterAll.
 */
export async function startTestStack(
  options: { dataDir?: string; overrides?: Record<string, string>; separateProcess?: boolean } = {},
): Promise<TestStack> {
  const emulators = options.separateProcess
    ? await startChildEmulators()
    : await startEmulators(options.dataDir ? { dataDir: options.dataDir } : {});
  // Test receivers listen on 127.0.0.1, so private webhook targets are allowed unless overridden.
  // One command queue unless a suite asks for shards: fewer queues to create and poll. Accounts
  // send unpaced unless a suite asks for pacing (docs/sending.md#paced-sends): the suites that
  // measure other things keep their speed.
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    COMMAND_SHARDS: '1',
    SEND_PACING_DEFAULT: 'off',
    ...emulators.env,
    ...options.overrides,
  });
  const clients = createClients(config);
  try {
    await ensureResources(config, clients, pino({ level: 'silent' }));
  } catch (error) {
    destroyClients(clients);
    await emulators.stop();
    throw error;
  }
  return {
    config,
    clients,
    env: {
      ...emulators.env,
      WEBHOOK_ALLOW_PRIVATE: String(config.WEBHOOK_ALLOW_PRIVATE),
      COMMAND_SHARDS: String(config.COMMAND_SHARDS),
      SEND_PACING_DEFAULT: config.SEND_PACING_DEFAULT,
    },
    async stop() {
      destroyClients(clients);
      await emulators.stop();
    },
  };
}

async function startChildEmulators(): Promise<Pick<Emulators, 'env' | 'stop'>> {
  const script = new URL('./emulators-child.ts', import.meta.url).pathname;
  // fauxqs persists with node:sqlite, which Node 22 flags as experimental on every start.
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', '--import', 'tsx', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout });
  const [line] = (await Promise.race([once(lines, 'line'), exited.then(() => [undefined])])) as [string | undefined];
  if (line === undefined) throw new Error('the emulators child process exited before printing its endpoints');
  return {
    env: JSON.parse(line) as Record<string, string>,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export const silentLogger = pino({ level: 'silent' });

/**
 * One emulator stack for the enclosing file or describe block: started in beforeAll, stopped in
 * afterAll. Read `stack` and `table` inside tests and hooks (they are set once beforeAll ran).
 */
export function useTestStack(options: Parameters<typeof startTestStack>[0] = {}): {
  readonly stack: TestStack;
  readonly table: Table;
  readonly queues: Queues;
} {
  let stack: TestStack | undefined;
  let table: Table | undefined;
  let queues: Queues | undefined;
  beforeAll(async () => {
    stack = await startTestStack(options);
    table = tableOf(stack.config, stack.clients);
  });
  afterAll(async () => {
    await stack?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useTestStack: read the stack inside a test or hook');
    return value;
  };
  return {
    get stack() {
      return started(stack);
    },
    get table() {
      return started(table);
    },
    get queues() {
      const { config, clients } = started(stack);
      queues ??= createQueues(config, clients, silentLogger);
      return queues;
    },
  };
}
