import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../core/logger.js';
import { CONNECTOR_NODE_FLAGS } from '../../connector/node-flags.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface ConnectorProcesses {
  pids: number[];
  /** SIGTERM to each (they hand their shards over), then waits for every exit. */
  stop(): Promise<void>;
}

/**
 * `CONNECTORS=3 npm start`: the connectors as separate processes (connector/main.ts, as on ECS),
 * for trying scale-out locally. Each gets the stack's env (emulator endpoints, sandbox), its
 * output goes to this terminal. With METRICS_PORT set, connector n serves its metrics on
 * METRICS_PORT + n.
 */
export function startConnectorProcesses(count: number, env: Record<string, string | undefined>, log: Logger): ConnectorProcesses {
  const children: ChildProcess[] = [];
  for (let n = 0; n < count; n++) {
    const metricsPort = env.METRICS_PORT ? { METRICS_PORT: String(Number(env.METRICS_PORT) + n) } : {};
    const child = spawn(process.execPath, [...CONNECTOR_NODE_FLAGS, '--import', 'tsx', 'connector/main.ts'], {
      cwd: repoRoot,
      env: { ...env, ...metricsPort, CREATE_RESOURCES: 'false' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    children.push(child);
    log.info({ connector: n, pid: child.pid }, 'connector process started');
  }
  return {
    pids: children.map((child) => child.pid ?? -1),
    async stop() {
      await Promise.all(
        children.map(async (child) => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = once(child, 'exit');
          child.kill('SIGTERM');
          await exited;
        }),
      );
    },
  };
}
