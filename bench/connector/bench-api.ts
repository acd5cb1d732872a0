import type { AwsClients } from '../../core/aws.js';
import type { Config } from '../../core/config.js';
import { startApiServer } from '../../functions/server.js';
import { pino } from 'pino';

export interface BenchApi {
  /** POSTs a JSON body; the answer's status and JSON body. */
  post(path: string, body: unknown): Promise<{ ok: boolean; status: number; json: Record<string, unknown> }>;
  close(): Promise<void>;
}

/** The gateway's API on a loopback port, silent, for benchmark steps that go through it. */
export async function startBenchApi(config: Config, clients: AwsClients): Promise<BenchApi> {
  const api = await startApiServer({ config, clients, logger: pino({ level: 'silent' }), port: 0, host: '127.0.0.1' });
  return {
    async post(path, body) {
      const response = await fetch(`${api.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { ok: response.ok, status: response.status, json: (await response.json()) as Record<string, unknown> };
    },
    close: () => api.close(),
  };
}
