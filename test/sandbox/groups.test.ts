import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GroupMetadata, WAMessage } from '@whiskeysockets/baileys';
import { startSandbox, type RunningSandbox } from '../../sandbox/index.js';
import { linkClient, type SandboxClient } from './support/sandbox-client.js';
import { waitFor } from '../support/wait.js';

const textOf = (m: WAMessage) => m.message?.conversation ?? m.message?.extendedTextMessage?.text;

describe('sandbox: groups with unmodified Baileys', () => {
  let sandbox: RunningSandbox;
  let alice: SandboxClient;
  let bob: SandboxClient;
  let carol: SandboxClient;
  let group: GroupMetadata;
  const updates: { client: string; id: string; action: string; participants: string[] }[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    alice = await linkClient(sandbox, '15550007001', { pushName: 'Alice' });
    bob = await linkClient(sandbox, '15550007002', { pushName: 'Bob' });
    carol = await linkClient(sandbox, '15550007003', { pushName: 'Carol' });
    for (const [name, client] of [
      ['alice', alice],
      ['bob', bob],
      ['carol', carol],
    ] as const) {
      client.sock!.ev.on('group-participants.update', ({ id, action, participants }) =>
        updates.push({ client: name, id, action, participants: participants.map((p) => p.id) }),
      );
    }
  });

  afterAll(async () => {
    await Promise.all([alice?.stop(), bob?.stop(), carol?.stop()]);
    await sandbox?.stop();
  });

  it('creates a group of three: creator superadmin, the others members, everyone told', async () => {
    group = await alice.sock!.groupCreate('Team', [bob.userJid, carol.userJid]);
    expect(group.id).toMatch(/^\d+@g\.us$/);
    expect(group.subject).toBe('Team');
    expect(group.owner).toBe(alice.userJid);
    expect(new Map(group.participants.map((p) => [p.id, p.admin]))).toEqual(
      new Map([
        [alice.userJid, 'superadmin'],
        [bob.userJid, null],
        [carol.userJid, null],
      ]),
    );
    const seen = await bob.waitForMessage((m) => m.key.remoteJid === group.id && m.messageStubType === 20, 'the create notification');
    expect(seen.messageStubParameters).toEqual(['Team']);
  });

  it('answers metadata to members and the participating list', async () => {
    const meta = await carol.sock!.groupMetadata(group.id);
    expect(meta.subject).toBe('Team');
    expect(meta.size).toBe(3);
    const all = await bob.sock!.groupFetchAllParticipating();
    expect(Object.keys(all)).toEqual([group.id]);
    expect(all[group.id]?.participants).toHaveLength(3);
  });

  it('delivers a group message from each member to the two others, decrypted', async () => {
    for (const [sender, others] of [
      [alice, [bob, carol]],
      [bob, [alice, carol]],
      [carol, [alice, bob]],
    ] as const) {
      const text = `hello from ${sender.userJid}`;
      const sent = await sender.sock!.sendMessage(group.id, { text });
      for (const other of others) {
        const got = await other.waitForMessage((m) => m.key.id === sent!.key.id, text);
        expect(textOf(got)).toBe(text);
        expect(got.key.remoteJid).toBe(group.id);
        expect(got.key.participant?.replace(/:\d+@/, '@')).toBe(sender.userJid);
        expect(got.key.fromMe).toBe(false);
      }
    }
    // A second message reuses the sender key already distributed (skmsg only).
    const again = await alice.sock!.sendMessage(group.id, { text: 'second' });
    expect(textOf(await bob.waitForMessage((m) => m.key.id === again!.key.id, 'second'))).toBe('second');
    expect(textOf(await carol.waitForMessage((m) => m.key.id === again!.key.id, 'second'))).toBe('second');
  });

  it('routes group receipts back to the sender with the member as participant', async () => {
    const receipts: { id: string; user: string; read: boolean }[] = [];
    alice.sock!.ev.on('message-receipt.update', (list) => {
      for (const { key, receipt } of list) receipts.push({ id: key.id ?? '', user: receipt.userJid ?? '', read: !!receipt.readTimestamp });
    });
    // A receipt that arrives while Baileys still buffers the sent message's upsert is folded into its userReceipt.
    const receiptOf = (id: string, user: string, read: boolean) =>
      receipts.find((r) => r.id === id && r.user === user && (!read || r.read)) ??
      alice.messages
        .filter((m) => m.key.id === id)
        .flatMap((m) => m.userReceipt ?? [])
        .find((r) => r.userJid === user && (!read || r.readTimestamp));
    const sent = await alice.sock!.sendMessage(group.id, { text: 'read me' });
    const got = await bob.waitForMessage((m) => m.key.id === sent!.key.id, 'read me');
    await bob.sock!.readMessages([got.key]);
    await waitFor('bob read receipt', () => receiptOf(sent!.key.id!, bob.userJid, true));
    await waitFor('carol delivery receipt', () => receiptOf(sent!.key.id!, carol.userJid, false));
  });

  it("routes a member's typing in the group to the other members, naming the member", async () => {
    const seen: [string, string, string][] = [];
    for (const client of [bob, carol]) {
      client.sock!.ev.on('presence.update', ({ id, presences }) => {
        for (const [participant, presence] of Object.entries(presences))
          seen.push([client.userJid, `${id} ${participant}`, presence.lastKnownPresence]);
      });
    }
    await alice.sock!.sendPresenceUpdate('composing', group.id);
    const typing = (member: SandboxClient) => seen.find(([who, , state]) => who === member.userJid && state === 'composing');
    await waitFor('bob and carol to see alice typing in the group', () => typing(bob) && typing(carol));
    expect(typing(bob)?.[1]).toBe(`${group.id} ${alice.userJid}`);
  });

  it('adds, promotes, demotes and removes with per-JID results', async () => {
    const dave = await linkClient(sandbox, '15550007004', { pushName: 'Dave' });
    try {
      const added = await alice.sock!.groupParticipantsUpdate(group.id, [dave.userJid, bob.userJid, '19990000001@s.whatsapp.net'], 'add');
      expect(added.map((r) => [r.jid, r.status])).toEqual([
        [dave.userJid, '200'],
        [bob.userJid, '409'],
        ['19990000001@s.whatsapp.net', '404'],
      ]);
      await waitFor('bob hears dave was added', () =>
        updates.find((u) => u.client === 'bob' && u.action === 'add' && u.participants.includes(dave.userJid)),
      );
      const first = await alice.sock!.sendMessage(group.id, { text: 'welcome dave' });
      expect(textOf(await dave.waitForMessage((m) => m.key.id === first!.key.id, 'welcome'))).toBe('welcome dave');

      const promoted = await alice.sock!.groupParticipantsUpdate(group.id, [bob.userJid], 'promote');
      expect(promoted.map((r) => r.status)).toEqual(['200']);
      const meta = await carol.sock!.groupMetadata(group.id);
      expect(meta.participants.find((p) => p.id === bob.userJid)?.admin).toBe('admin');
      await expect(carol.sock!.groupParticipantsUpdate(group.id, [dave.userJid], 'remove')).rejects.toThrow();

      const removed = await bob.sock!.groupParticipantsUpdate(group.id, [dave.userJid], 'remove');
      expect(removed.map((r) => r.status)).toEqual(['200']);
      await waitFor('dave hears he was removed', () =>
        updates.find((u) => u.client === 'carol' && u.action === 'remove' && u.participants.includes(dave.userJid)),
      );
      await expect(dave.sock!.groupMetadata(group.id)).rejects.toThrow();
      const after = await carol.sock!.sendMessage(group.id, { text: 'dave is gone' });
      await alice.waitForMessage((m) => m.key.id === after!.key.id, 'dave is gone');
      expect(dave.messages.find((m) => m.key.id === after!.key.id)).toBeUndefined();

      const demoted = await alice.sock!.groupParticipantsUpdate(group.id, [bob.userJid], 'demote');
      expect(demoted.map((r) => r.status)).toEqual(['200']);
    } finally {
      await dave.stop();
    }
  });

  it('changes subject and description, gives an invite code, and lets a member leave', async () => {
    await bob.sock!.groupUpdateSubject(group.id, 'Team 2');
    await alice.sock!.groupUpdateDescription(group.id, 'all of us');
    const meta = await carol.sock!.groupMetadata(group.id);
    expect(meta.subject).toBe('Team 2');
    expect(meta.desc).toBe('all of us');
    const code = await alice.sock!.groupInviteCode(group.id);
    expect(code).toMatch(/^[A-Za-z0-9_-]{22}$/);
    await expect(carol.sock!.groupInviteCode(group.id)).rejects.toThrow();
    await carol.sock!.groupLeave(group.id);
    const left = await alice.sock!.groupMetadata(group.id);
    expect(left.participants.map((p) => p.id).sort()).toEqual([alice.userJid, bob.userJid].sort());
    expect(await carol.sock!.groupFetchAllParticipating()).toEqual({});
  });

  it('sends media to a group', async () => {
    const sent = await bob.sock!.sendMessage(group.id, { image: Buffer.from('not really a png'), caption: 'pic', mimetype: 'image/png' });
    const got = await alice.waitForMessage((m) => m.key.id === sent!.key.id, 'the image');
    expect(got.message?.imageMessage?.caption).toBe('pic');
  });

  it('logs no Baileys errors', () => {
    expect(alice.unexpectedErrors).toEqual([]);
    expect(bob.unexpectedErrors).toEqual([]);
    expect(carol.unexpectedErrors).toEqual([]);
  });
});
