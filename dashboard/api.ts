import { type components, createGatewayClient, type GatewayClient, type paths } from '../client/index.js';

/** The JSON a GET answers with 200, as the generated client types it. */
type Answer200<P extends keyof paths> = paths[P]['get'] extends { responses: { 200: { content: { 'application/json': infer T } } } }
  ? T
  : never;

// What the views show, typed from the API's own document (client/schema.ts), not restated.
export type Account = components['schemas']['Account'];
export type Webhook = components['schemas']['Webhook'];
export type AccessKey = components['schemas']['AccessKey'];
export type Chat = Answer200<'/accounts/{accountId}/chats'>['chats'][number];
export type Message = Answer200<'/accounts/{accountId}/chats/{chatId}/messages'>['messages'][number];
export type Delivery = Answer200<'/webhooks/{webhookId}/deliveries'>['deliveries'][number];

/** An answer of the API that is not a success: its status and the API's own `error` text. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The API's root: the console is served at `<root>/dashboard/`, a stage path included. */
function apiRoot(): string {
  return new URL('..', window.location.href).href.replace(/\/$/, '');
}

export function gatewayClient(key: string | undefined): GatewayClient {
  return createGatewayClient({ baseUrl: apiRoot(), ...(key ? { key } : {}) });
}

let unauthorized: () => void = () => undefined;

/** What to do when the API stops accepting the key (revoked, or API_KEY rotated). */
export function onUnauthorized(handler: () => void): void {
  unauthorized = handler;
}

type Answer<T> = { data?: T; error?: unknown; response: Response };

/** The data of a successful answer; anything else as an ApiError with the API's message. */
export async function call<T>(request: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await request;
  } catch {
    throw new ApiError(0, 'The gateway cannot be reached. Check that it is running, then try again.');
  }
  const { response, data, error } = answer;
  if (response.ok && data !== undefined) return data;
  if (response.status === 401) unauthorized();
  const body = error as { error?: unknown; detail?: unknown } | undefined;
  const message = typeof body?.error === 'string' ? body.error : `${response.status} ${response.statusText}`.trim();
  const detail = typeof body?.detail === 'string' ? `: ${body.detail}` : '';
  throw new ApiError(response.status, `${message}${detail}`);
}

/** A message to show for a failed call. */
export function problem(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
