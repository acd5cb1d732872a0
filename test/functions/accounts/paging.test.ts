import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiStack, type TestApi } from '../../support/test-api.js';

let api: TestApi;
let stop: () => Promise<void>;
const ids = ['pageA', 'pageB', 'pageC', 'pageD', 'pageE', 'pageF', 'pageG'];

beforeAll(async () => {
  ({ api, stop } = await startApiStack());
  for (const id of ids) expect((await api.call('POST', '/accounts', { id })).status).toBe(201);
});
afterAll(async () => {
  await stop?.();
});

type Listed = { ok: boolean; accounts: { _id: string }[]; nextCursor?: string };

describe('GET /accounts in pages', () => {
  it('without limit or cursor: every account and no cursor (the spec answer)', async () => {
    const all = (await api.call('GET', '/accounts')).body as Listed;
    expect(all.accounts.map((a) => a._id)).toEqual(ids);
    expect(all.nextCursor).toBeUndefined();
  });

  it('with a limit: pages that follow each other to the end, in the same order', async () => {
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const answer = await api.call('GET', `/accounts?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(answer.status).toBe(200);
      const page = answer.body as Listed;
      sizes.push(page.accounts.length);
      seen.push(...page.accounts.map((a) => a._id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    expect(sizes).toEqual([3, 3, 1]);
  });

  it('refuses a limit out of range and a cursor no page gave out', async () => {
    for (const limit of ['0', '501', 'x', '2.5']) {
      expect((await api.call('GET', `/accounts?limit=${limit}`)).body).toEqual({
        ok: false,
        error: 'limit must be an integer from 1 to 500',
      });
    }
    const foreign = Buffer.from(JSON.stringify({ pk: 'A', sk: 'B', gsi1pk: 'CHATS#x', gsi1sk: 'C' })).toString('base64url');
    for (const cursor of ['not-a-cursor', foreign, Buffer.from('[1,2]').toString('base64url')]) {
      const answer = await api.call('GET', `/accounts?cursor=${encodeURIComponent(cursor)}`);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ ok: false, error: 'cursor is not valid' });
    }
  });
});
