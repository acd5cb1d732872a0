import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

export type { paths } from './schema.js';

export function createGatewayClient(options: { baseUrl: string; key?: string; fetch?: typeof fetch }) {
  return createClient<paths>({
    baseUrl: options.baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    headers: options.key ? { Authorization: `Bearer ${options.key}` } : {},
  });
}
export type GatewayClient = ReturnType<typeof createGatewayClient>;
