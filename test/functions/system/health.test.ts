import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeWaVersion } from '../../../core/store/wa-version.js';
import { tableOf } from '../../../core/store/table.js';
import { startTestApi } from '../../support/test-api.js';
import { startTestStack, type TestStack } from '../../support/test-stack.js';

describe('GET /ping', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('answers pong, with the WhatsApp Web version once a connector has stored one', async () => {
    const before = await startTestApi(stack);
    try {
      const { status, body } = await before.call('GET', '/ping');
      expect(status).toBe(200);
      expect(body).toEqual({ ok: true, pong: true, time: expect.any(String) });
    } finally {
      await before.close();
    }
    await writeWaVersion(tableOf(stack.config, stack.clients), {
      version: [2, 3000, 1_044_000_000],
      source: 'published',
      resolvedAt: Date.now(),
    });
    const after = await startTestApi(stack);
    try {
      expect((await after.call('GET', '/ping')).body).toMatchObject({
        ok: true,
        pong: true,
        waVersion: '2.3000.1044000000',
        waVersionSource: 'published',
      });
    } finally {
      await after.close();
    }
  });
});
