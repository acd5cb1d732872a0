import type { SandboxControl } from '../../test/e2e/support/sandbox-control.js';
import { waitFor } from '../../test/support/wait.js';
import { inBatches } from '../connector/measure.js';

/**
 * What bench:dashboard sets up through the HTTP API, as a person or a client would: accounts
 * created with POST /accounts, each linked by a sandbox phone scanning the QR that GET /qr
 * answers (what the console shows), and a chat filled by a phone's messages.
 */

/** Calls the API with the admin key; the parsed JSON answer, or an error naming the status. */
export function apiCaller(url: string, key: string) {
  return async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as T & { error?: string };
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${json.error ?? ''}`);
    return json;
  };
}
type Api = ReturnType<typeof apiCaller>;

export interface ConsoleAccount {
  id: string;
  name: string;
  phone: string;
}

/**
 * Creates the accounts and links each to its phone; resolves once every one is `connected` and
 * the network has nothing left for them (their history bootstrap taken in).
 */
export async function createAndLink(api: Api, control: SandboxControl, accounts: ConsoleAccount[], concurrency = 5): Promise<void> {
  await inBatches(accounts, concurrency, async ({ id, name, phone }) => {
    await control.createPhone(phone);
    await api('POST', '/accounts', { id, name });
    await waitFor(
      `the phone of ${id} to scan its QR`,
      async () => {
        const { qr } = await api<{ qr: string }>('GET', `/accounts/${id}/qr`);
        await control.scan(phone, qr); // throws when the code rotated between the read and the scan
        return true;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
  });
  const wanted = new Set(accounts.map((account) => account.id));
  await waitFor(
    `${wanted.size} accounts connected`,
    async () => {
      const { accounts: listed } = await api<{ accounts: Array<{ _id: string; currentStatus: string }> }>('GET', '/accounts');
      return listed.filter((account) => wanted.has(account._id) && account.currentStatus === 'connected').length === wanted.size;
    },
    { timeoutMs: 300_000, intervalMs: 500 },
  );
  await waitFor('the linked devices to take in what the network sent them', async () =>
    Object.values(await control.undelivered()).every((count) => count === 0),
  );
}

/** True once the chat holds at least `count` stored messages (the count-th newest is there). */
export async function holdsMessages(api: Api, accountId: string, chatId: string, count: number): Promise<boolean> {
  const { messages } = await api<{ messages: unknown[] }>(
    'GET',
    `/accounts/${accountId}/chats/${encodeURIComponent(chatId)}/messages?limit=1&skip=${count - 1}`,
  );
  return messages.length === 1;
}
