import { describe, expect } from 'vitest';
import { proto } from '@whiskeysockets/baileys';
import { withLinkedPair } from './support/linked-pair.js';

const text = (m: { message?: proto.IMessage | null }) => m.message?.conversation ?? m.message?.extendedTextMessage?.text;

const it = withLinkedPair({ alice: { phone: '15550009001' }, bob: { phone: '15550009002' }, sandbox: { addressing: 'lid' } });

describe('sandbox: LID-addressed delivery (addressing: lid)', () => {
  it('delivers companion messages from the sender LID with sender_pn, with receipts', async ({ linked: { alice, bob } }) => {
    const aliceLid = alice.auth.creds.me!.lid!.replace(/:\d+@/, '@');
    const sent = await alice.sock!.sendMessage(bob.userJid, { text: 'lid hello' });
    const got = await bob.waitForMessage((m) => m.key.id === sent!.key.id, 'LID-addressed message');
    expect(text(got)).toBe('lid hello');
    expect(got.key.remoteJid).toBe(aliceLid);
    expect(got.key.remoteJidAlt).toBe(alice.userJid);
    await alice.waitForStatus(sent!.key.id!, proto.WebMessageInfo.Status.DELIVERY_ACK);

    const reply = await bob.sock!.sendMessage(got.key.remoteJid!, { text: 'lid reply' });
    const back = await alice.waitForMessage((m) => m.key.id === reply!.key.id, 'reply');
    expect(text(back)).toBe('lid reply');
  });

  it('delivers phone messages from the phone LID', async ({ linked: { sandbox, alice } }) => {
    const res = await fetch(`${sandbox.descriptor.controlUrl}/phones/15550009002/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to: '15550009001', text: 'from bob phone' }),
    });
    const { id } = (await res.json()) as { id: string };
    const got = await alice.waitForMessage((m) => m.key.id === id, 'phone message');
    expect(text(got)).toBe('from bob phone');
    expect(got.key.remoteJid).toMatch(/@lid$/);
  });

  it('logs no Baileys errors', ({ linked: { alice, bob } }) => {
    expect(alice.unexpectedErrors).toEqual([]);
    expect(bob.unexpectedErrors).toEqual([]);
  });
});
