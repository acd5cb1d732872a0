import { proto, type BinaryNode } from '@whiskeysockets/baileys';
import { describe, expect } from 'vitest';
import { waitFor } from '../support/wait.js';
import { withLinkedPair } from './support/linked-pair.js';

const { Status } = proto.WebMessageInfo;

const it = withLinkedPair({ alice: { phone: '15550008001', pushName: 'Alice' }, bob: { phone: '15550008002', pushName: 'Bob' } });

/**
 * WhatsApp's refusals on the sandbox (`POST /limits`), seen by unmodified Baileys exactly as from
 * WhatsApp: a nack (`<ack class="message" error>`) that Baileys turns into `messages.update`
 * with status ERROR and the error as the first stub parameter, and a message nobody receives.
 */
describe('sandbox: WhatsApp refusing sends', () => {
  const control = async (controlUrl: string, path: string, body: unknown) => {
    const response = await fetch(`${controlUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  it.for([429, 463] as const)(
    'POST /limits with %i: the next send is nacked with that error, reaches nobody, and the one after goes through',
    async (error, { linked: { sandbox, alice, bob } }) => {
      const set = await control(sandbox.descriptor.controlUrl, '/limits', { phone: '15550008001', error, count: 1 });
      expect(set).toEqual({ status: 200, json: { ok: true, phone: '15550008001', pending: { refuse: { error, count: 1, delayMs: 0 } } } });

      const refused = await alice.sock!.sendMessage(bob.userJid, { text: `refused with ${error}` });
      const next = await alice.sock!.sendMessage(bob.userJid, { text: 'allowed again' });
      await bob.waitForMessage((m) => m.key.id === next!.key.id, 'the next message');
      // Right after linking Baileys buffers its events and folds the update into the echo of the
      // send (messages.upsert): either carries the status and the error.
      const refusal = await waitFor('the ERROR status', () => {
        const update = alice.updates.find((u) => u.key.id === refused!.key.id && u.update.status === Status.ERROR)?.update;
        const echo = alice.messages.find((m) => m.key.id === refused!.key.id && m.status === Status.ERROR);
        return update ?? echo;
      });
      expect(refusal.messageStubParameters?.[0]).toBe(String(error));
      // Delivered in order: had the refused one been delivered, it would be there by now.
      expect(bob.rawMessages.map((m) => m.id)).not.toContain(refused!.key.id);
    },
  );

  it('POST /acks/withhold: the message is delivered but its server ack never comes', async ({ linked: { sandbox, alice, bob } }) => {
    const acks: BinaryNode[] = [];
    alice.sock!.ws.on('CB:ack,class:message', (node: BinaryNode) => acks.push(node));
    expect((await control(sandbox.descriptor.controlUrl, '/acks/withhold', { phone: '15550008001', count: 1 })).status).toBe(200);

    const withheld = await alice.sock!.sendMessage(bob.userJid, { text: 'no ack' });
    const acked = await alice.sock!.sendMessage(bob.userJid, { text: 'acked' });
    await waitFor('the ack of the second message', () => acks.some((a) => a.attrs.id === acked!.key.id));
    await bob.waitForMessage((m) => m.key.id === withheld!.key.id, 'the ack-less message');
    expect(acks.map((a) => a.attrs.id)).not.toContain(withheld!.key.id);
  });

  it('refuses a limit it cannot model, and an unknown phone', async ({ linked: { sandbox } }) => {
    const url = sandbox.descriptor.controlUrl;
    expect((await control(url, '/limits', { phone: '15550008001', error: 500, count: 1 })).status).toBe(400);
    expect((await control(url, '/limits', { phone: '15550008001', error: 429, count: -1 })).status).toBe(400);
    expect((await control(url, '/limits', { phone: '15550008999', error: 429, count: 1 })).status).toBe(404);
  });
});
