import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './schema.js';

/**
 * A typed client of the gateway's HTTP API: every path, parameter, body and answer (errors
 * included) as the API's OpenAPI document describes them (client/schema.ts, generated). No
 * Node-only import: it runs in a browser as well as on Node 18+, Deno or Bun. docs/client.md.
 */

export type { components, operations, paths } from './schema.js';

export interface GatewayClientOptions {
  /** Where the API answers, e.g. `http://127.0.0.1:3000`; the paths are appended to it. */
  baseUrl: string;
  /** An admin key (`API_KEY`) or an account key, sent as `Authorization: Bearer <key>`; none when keys are off. */
  key?: string;
  /** The fetch to send requests with (default: the global fetch), e.g. one that signs them. */
  fetch?: ClientOptions['fetch'];
}

export type GatewayClient = Client<paths>;

export function createGatewayClient({ baseUrl, key, fetch }: GatewayClientOptions): GatewayClient {
  return createClient<paths>({
    baseUrl,
    ...(key ? { headers: { authorization: `Bearer ${key}` } } : {}),
    ...(fetch ? { fetch } : {}),
  });
}

/**
 * A multipart body (the media sends) as FormData, to pass as `bodySerializer`: a Blob (a File in
 * a browser, which keeps its name) as a file, any other value as text; absent fields stay out.
 */
export function formDataOf(body: Record<string, Blob | string | number | boolean | undefined> | undefined): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(body ?? {})) {
    if (value === undefined) continue;
    form.set(name, value instanceof Blob ? value : String(value));
  }
  return form;
}
