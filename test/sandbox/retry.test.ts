import { describe, expect } from 'vitest';
import { withLinkedPair } from './support/linked-pair.js';

const it = withLinkedPair({ alice: { phone: '15550008001' }, bob: { phone: '15550008002' } });

describe('sandbox: retry receipts', () => {
  it('a device that cannot decrypt asks for a retry and gets the message re-encrypted', async ({ linked: { alice, bob } }) => {
    const first = await alice.sock!.sendMessage(bob.userJid, { text: 'session set up' });
    await bob.waitForMessage((m) => m.key.id === first!.key.id, 'first message');

    // Bob loses his sessions with Alice's devices: her next message (a plain `msg`) cannot be
    // decrypted, Bob sends a retry receipt with fresh keys, Alice re-sends it as a `pkmsg`.
    const aliceLidUser = alice.auth.creds.me!.lid!.split(/[:@]/)[0]!;
    const lost = bob.auth.keyIds('session').filter((id) => id.startsWith(`${aliceLidUser}_`));
    expect(lost.length).toBeGreaterThan(0);
    await bob.auth.keys.set({ session: Object.fromEntries(lost.map((id) => [id, null])) });

    const second = await alice.sock!.sendMessage(bob.userJid, { text: 'after the retry' });
    const got = await bob.waitForMessage(
      (m) => m.key.id === second!.key.id && !!(m.message?.conversation ?? m.message?.extendedTextMessage?.text),
      'the re-sent message',
    );
    expect(got.message?.conversation ?? got.message?.extendedTextMessage?.text).toBe('after the retry');
    // The first attempt really failed (Baileys logs that at error level), so the retry path ran.
    expect(bob.errors.some((e) => e.msg === 'failed to decrypt message')).toBe(true);
    expect(alice.unexpectedErrors).toEqual([]);
  });

  it('the phone answers a retry receipt by re-sending its message', async ({ linked: { sandbox, alice, bob } }) => {
    const send = (text: string) =>
      fetch(`${sandbox.descriptor.controlUrl}/phones/15550008001/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ to: bob.userJid, text }),
      }).then(async (res) => ((await res.json()) as { id: string }).id);
    const first = await send('from the phone');
    await bob.waitForMessage((m) => m.key.id === first, 'the phone message');

    const aliceLidUser = alice.auth.creds.me!.lid!.split(/[:@]/)[0]!;
    const lost = bob.auth.keyIds('session').filter((id) => id === `${aliceLidUser}_1.0`);
    expect(lost).toHaveLength(1);
    await bob.auth.keys.set({ session: { [lost[0]!]: null } });

    const failuresBefore = bob.errors.filter((e) => e.msg === 'failed to decrypt message').length;
    const second = await send('phone, again');
    const got = await bob.waitForMessage(
      (m) => m.key.id === second && !!(m.message?.conversation ?? m.message?.extendedTextMessage?.text),
      'the phone re-sent message',
    );
    expect(got.message?.conversation).toBe('phone, again');
    expect(bob.errors.filter((e) => e.msg === 'failed to decrypt message').length).toBeGreaterThan(failuresBefore);
  });
});
