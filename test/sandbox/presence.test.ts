import { readFile } from 'node:fs/promises';
import type { PresenceData } from '@whiskeysockets/baileys';
import { Agent, fetch } from 'undici';
import { describe, expect } from 'vitest';
import type { SandboxClient } from './support/sandbox-client.js';
import { withLinkedPair } from './support/linked-pair.js';
import { waitFor } from '../support/wait.js';

const it = withLinkedPair({ alice: { phone: '15550007001', pushName: 'Alice' }, bob: { phone: '15550007002', pushName: 'Bob' } });

/** Every presence.update the client's current socket reports, as [chat, participant, presence]. */
function presencesSeenBy(client: SandboxClient): [string, string, PresenceData][] {
  const seen: [string, string, PresenceData][] = [];
  client.sock!.ev.on('presence.update', ({ id, presences }) => {
    for (const [participant, presence] of Object.entries(presences)) seen.push([id, participant, presence]);
  });
  return seen;
}

describe('sandbox: presence, chat states, number check and profile pictures', () => {
  it('routes typing, recording and paused to the other account', async ({ linked: { alice, bob } }) => {
    const seen = presencesSeenBy(bob);
    const states = () => seen.filter(([id]) => id === alice.userJid).map(([, , p]) => p.lastKnownPresence);
    await alice.sock!.sendPresenceUpdate('composing', bob.userJid);
    await waitFor('bob to see alice typing', () => states().includes('composing'));
    await alice.sock!.sendPresenceUpdate('recording', bob.userJid);
    await waitFor('bob to see alice recording', () => states().includes('recording'));
    // Baileys reports `paused` as available.
    await alice.sock!.sendPresenceUpdate('paused', bob.userJid);
    await waitFor('bob to see alice stop typing', () => states().at(-1) === 'available');
    expect(states()).toEqual(['composing', 'recording', 'available']);
  });

  it('sends available and unavailable to subscribers', async ({ linked: { alice, bob } }) => {
    const seen = presencesSeenBy(alice);
    const states = () => seen.filter(([id]) => id === bob.userJid).map(([, , p]) => p.lastKnownPresence);
    await alice.sock!.presenceSubscribe(bob.userJid);
    // Baileys announces presence only with a push name (the phone's, set at link time in WhatsApp).
    bob.auth.creds.me!.name ??= 'Bob';
    await bob.sock!.sendPresenceUpdate('available');
    await waitFor('alice to see bob online', () => states().includes('available'), { timeoutMs: 15_000 });
    await bob.sock!.sendPresenceUpdate('unavailable');
    await waitFor('alice to see bob offline', () => states().at(-1) === 'unavailable');
  });

  it('answers the number check: a known number exists with its JID, an unknown one does not', async ({ linked: { alice, bob } }) => {
    const found = await alice.sock!.onWhatsApp(`+${bob.userJid.split('@')[0]}`, '15550007999');
    expect(found?.find((r) => r.jid === bob.userJid)?.exists).toBe(true);
    expect(found?.some((r) => r.exists && r.jid.startsWith('15550007999'))).toBe(false);
  });

  it('answers a profile picture query with a URL the media host serves; an unknown JID has none', async ({
    linked: { sandbox, alice, bob },
  }) => {
    const url = await alice.sock!.profilePictureUrl(bob.userJid, 'image');
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/pp\/15550007002\.jpg$/);
    const ca = await readFile(sandbox.descriptor.mediaCaFile, 'utf8');
    const response = await fetch(url!, { dispatcher: new Agent({ connect: { ca } }) });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await response.arrayBuffer()).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    await expect(alice.sock!.profilePictureUrl('15550007999@s.whatsapp.net')).rejects.toThrow(/item-not-found|404/);
  });
});
