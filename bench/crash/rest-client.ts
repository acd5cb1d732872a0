/**
 * The gateway's REST API as the crash bench uses it: only routes and fields of the public
 * contract (accounts, webhooks, text send with its Idempotency-Key, chats and messages with paging).
 */
import { z } from 'zod';

const PAGE = 100;
const REQUEST_TIMEOUT_MS = 30_000;

const accountBody = z.object({ account: z.object({ _id: z.string(), currentStatus: z.string().optional() }) });
const accountsBody = z.object({ accounts: z.array(z.object({ _id: z.string(), currentStatus: z.string().optional() })) });
const chatsBody = z.object({ chats: z.array(z.object({ chatId: z.string() })) });
const messagesBody = z.object({
  messages: z.array(z.object({ messageId: z.string(), fromMe: z.boolean().optional(), text: z.string().optional() })),
});

/**
 * What a send call came back with: an HTTP status (with the error body's `detail` when it is not
 * 200), or the network error (e.g. the process died).
 */
export type SendOutcome = { status: number; at: number; detail?: string } | { error: string; at: number };

export interface RestClient {
  createAccount(id: string): Promise<void>;
  currentStatus(id: string): Promise<string | undefined>;
  connectedAccounts(): Promise<number>;
  registerWebhook(url: string): Promise<void>;
  /** `idempotencyKey`: a retry with the same key answers like the first call instead of sending again. */
  sendText(accountId: string, to: string, message: string, idempotencyKey?: string): Promise<SendOutcome>;
  /** Ids of the messages stored for the account that it received (fromMe false), every chat, every page. */
  storedInboundIds(accountId: string): Promise<Set<string>>;
}

export function restClient(baseUrl: string): RestClient {
  async function call(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; json: unknown }> {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      ...(body !== undefined ? { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      // Kept as text for the error message.
    }
    return { status: response.status, json };
  }
  async function expectOk<T extends z.ZodType>(method: string, path: string, schema: T, body?: unknown): Promise<z.infer<T>> {
    const { status, json } = await call(method, path, body);
    if (status < 200 || status > 299) throw new Error(`${method} ${path}: ${status} ${JSON.stringify(json)}`);
    return schema.parse(json);
  }

  return {
    async createAccount(id) {
      await expectOk('POST', '/accounts', z.unknown(), { id });
    },
    async currentStatus(id) {
      const { status, json } = await call('GET', `/accounts/${encodeURIComponent(id)}`);
      return status === 200 ? accountBody.parse(json).account.currentStatus : undefined;
    },
    async connectedAccounts() {
      const { accounts } = await expectOk('GET', '/accounts', accountsBody);
      return accounts.filter((a) => a.currentStatus === 'connected').length;
    },
    async registerWebhook(url) {
      await expectOk('POST', '/webhooks', z.unknown(), { url });
    },
    async sendText(accountId, to, message, idempotencyKey) {
      try {
        const headers: Record<string, string> = idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {};
        const { status, json } = await call('POST', `/accounts/${encodeURIComponent(accountId)}/message/send`, { to, message }, headers);
        const detail = status === 200 ? undefined : (json as { detail?: unknown } | undefined)?.detail;
        return { status, at: performance.now(), ...(typeof detail === 'string' ? { detail } : {}) };
      } catch (error) {
        const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
        return { error: `${error instanceof Error ? error.message : String(error)}${cause}`, at: performance.now() };
      }
    },
    async storedInboundIds(accountId) {
      const ids = new Set<string>();
      const account = encodeURIComponent(accountId);
      for (let chatSkip = 0; ; chatSkip += PAGE) {
        const { chats } = await expectOk('GET', `/accounts/${account}/chats?limit=${PAGE}&skip=${chatSkip}`, chatsBody);
        for (const { chatId } of chats) {
          for (let skip = 0; ; skip += PAGE) {
            const path = `/accounts/${account}/chats/${encodeURIComponent(chatId)}/messages?limit=${PAGE}&skip=${skip}`;
            const { messages } = await expectOk('GET', path, messagesBody);
            for (const m of messages) if (m.fromMe !== true) ids.add(m.messageId);
            if (messages.length < PAGE) break;
          }
        }
        if (chats.length < PAGE) break;
      }
      return ids;
    },
  };
}
