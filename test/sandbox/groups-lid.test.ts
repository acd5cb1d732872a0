import { describe, expect } from 'vitest';
import { withLinkedPair } from './support/linked-pair.js';

const it = withLinkedPair({
  alice: { phone: '15550007201', pushName: 'Alice' },
  bob: { phone: '15550007202', pushName: 'Bob' },
  sandbox: { addressing: 'lid' },
});

describe('sandbox: a LID-addressed group (SANDBOX_ADDRESSING=lid)', () => {
  it('names members by LID with their phone number, and routes sender-key messages both ways', async ({ linked: { alice, bob } }) => {
    const group = await alice.sock!.groupCreate('LID group', [bob.userJid]);
    expect(group.addressingMode).toBe('lid');
    const bobMember = group.participants.find((p) => p.phoneNumber === bob.userJid);
    expect(bobMember?.id).toMatch(/@lid$/);
    for (const [from, to] of [
      [alice, bob],
      [bob, alice],
    ] as const) {
      const sent = await from.sock!.sendMessage(group.id, { text: `lid from ${from.userJid}` });
      const got = await to.waitForMessage((m) => m.key.id === sent!.key.id, 'the group message');
      expect(got.message?.conversation ?? got.message?.extendedTextMessage?.text).toBe(`lid from ${from.userJid}`);
      expect(got.key.participant).toMatch(/@lid$/);
    }
    expect(alice.unexpectedErrors).toEqual([]);
    expect(bob.unexpectedErrors).toEqual([]);
  });
});
