import type { Logger } from '../../core/logger.js';
import { startApiServer, type ApiServer } from '../../functions/server.js';
import { startFakeConnector, type FakeConnector } from './fake-connector.js';
import { silentLogger, startTestStack, type TestStack } from './test-stack.js';

/**
 * The API on a free loopback port against the stack; `call` sends JSON and parses the answer.
 * `logger`: where the API logs (silent by default).
 */
export async function startTestApi(
  stack: Pick<TestStack, 'config' | 'clients'>,
  logger: Logger = silentLogger,
): Promise<ApiServer & { call: typeof call }> {
  const api = await startApiServer({ config: stack.config, clients: stack.clients, logger, port: 0, host: '127.0.0.1' });
  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
    const init: RequestInit = { method, headers: { ...headers }, ...(signal ? { signal } : {}) };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${api.url}${path}`, init);
    const text = await response.text();
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new Error(`${method} ${path}: not JSON (${response.status}): ${text.slice(0, 200)}`);
    }
    return { status: response.status, body: json, headers: response.headers };
  }
  return { ...api, call };
}

export type TestApi = Awaited<ReturnType<typeof startTestApi>>;

/**
 * A test stack with the API and a fake connector on it; `stop` ends them in reverse order.
 * A suite destructures it in `beforeAll` and calls `stop` in `afterAll`.
 */
export async function startApiStack(
  options: Parameters<typeof startTestStack>[0] = {},
): Promise<{ stack: TestStack; api: TestApi; connector: FakeConnector; stop: () => Promise<void> }> {
  const stack = await startTestStack(options);
  let api: TestApi;
  try {
    api = await startTestApi(stack);
  } catch (error) {
    await stack.stop();
    throw error;
  }
  const connector = startFakeConnector(stack);
  const stop = async () => {
    await connector.stop();
    await api.close();
    await stack.stop();
  };
  return { stack, api, connector, stop };
}
