import { describe, expect } from 'vitest';
import { proto } from '@whiskeysockets/baileys';
import { withLinkedPair } from './support/linked-pair.js';

const { Status } = proto.WebMessageInfo;

const it = withLinkedPair({ alice: { phone: '15550002001', pushName: 'Alice' }, bob: { phone: '15550002002', pushName: 'Bob' } });

describe('sandbox: text between two companions', () => {
  it('delivers text both ways with delivered and read receipts', async ({ linked: { alice, bob } }) => {
    const sent = await alice.sock!.sendMessage(bob.userJid, { text: 'hello bob' });
    const received = await bob.waitForMessage((m) => m.key.id === sent!.key.id, 'hello bob');
    expect(received.message?.conversation ?? received.message?.extendedTextMessage?.text).toBe('hello bob');
    expect(received.key.fromMe).toBe(false);
    await alice.waitForStatus(sent!.key.id!, Status.DELIVERY_ACK);

    await bob.sock!.readMessages([received.key]);
    await alice.waitForStatus(sent!.key.id!, Status.READ);

    const reply = await bob.sock!.sendMessage(alice.userJid, { text: 'hi alice' });
    const back = await alice.waitForMessage((m) => m.key.id === reply!.key.id, 'hi alice');
    expect(back.message?.conversation ?? back.message?.extendedTextMessage?.text).toBe('hi alice');
    await bob.waitForStatus(reply!.key.id!, Status.DELIVERY_ACK);
  });

  it('routes a quoted reply', async ({ linked: { alice, bob } }) => {
    const original = await alice.sock!.sendMessage(bob.userJid, { text: 'question?' });
    const got = await bob.waitForMessage((m) => m.key.id === original!.key.id, 'question');
    const reply = await bob.sock!.sendMessage(alice.userJid, { text: 'answer' }, { quoted: got });
    const received = await alice.waitForMessage((m) => m.key.id === reply!.key.id, 'answer');
    expect(received.message?.extendedTextMessage?.text).toBe('answer');
    expect(received.message?.extendedTextMessage?.contextInfo?.stanzaId).toBe(original!.key.id);
  });

  it('routes a reaction', async ({ linked: { alice, bob } }) => {
    const original = await alice.sock!.sendMessage(bob.userJid, { text: 'react to me' });
    const got = await bob.waitForMessage((m) => m.key.id === original!.key.id, 'react to me');
    const reaction = await bob.sock!.sendMessage(alice.userJid, { react: { text: '👍', key: got.key } });
    const received = await alice.waitForMessage((m) => m.key.id === reaction!.key.id, 'reaction');
    expect(received.message?.reactionMessage?.text).toBe('👍');
    expect(received.message?.reactionMessage?.key?.id).toBe(original!.key.id);
  });

  it('routes a delete for everyone', async ({ linked: { alice, bob } }) => {
    const original = await alice.sock!.sendMessage(bob.userJid, { text: 'oops' });
    await bob.waitForMessage((m) => m.key.id === original!.key.id, 'oops');
    const revoke = await alice.sock!.sendMessage(bob.userJid, { delete: original!.key });
    const received = await bob.waitForMessage((m) => m.key.id === revoke!.key.id, 'revoke');
    expect(received.message?.protocolMessage?.type).toBe(proto.Message.ProtocolMessage.Type.REVOKE);
    expect(received.message?.protocolMessage?.key?.id).toBe(original!.key.id);
  });

  it('routes an edit', async ({ linked: { alice, bob } }) => {
    const original = await alice.sock!.sendMessage(bob.userJid, { text: 'typo hree' });
    await bob.waitForMessage((m) => m.key.id === original!.key.id, 'typo hree');
    const edit = await alice.sock!.sendMessage(bob.userJid, { text: 'typo here', edit: original!.key });
    const received = await bob.waitForMessage((m) => m.key.id === edit!.key.id, 'the edit');
    const protocol = received.message?.protocolMessage ?? received.message?.editedMessage?.message?.protocolMessage;
    expect(protocol?.type).toBe(proto.Message.ProtocolMessage.Type.MESSAGE_EDIT);
    expect(protocol?.key?.id).toBe(original!.key.id);
    expect(protocol?.editedMessage?.conversation ?? protocol?.editedMessage?.extendedTextMessage?.text).toBe('typo here');
  });

  it('routes a message addressed to a LID', async ({ linked: { alice, bob } }) => {
    const bobLid = bob.auth.creds.me!.lid!.replace(/:\d+@/, '@');
    const sent = await alice.sock!.sendMessage(bobLid, { text: 'to your lid' });
    const got = await bob.waitForMessage((m) => m.key.id === sent!.key.id, 'the LID-addressed message');
    expect(got.message?.conversation ?? got.message?.extendedTextMessage?.text).toBe('to your lid');
  });

  it('answers onWhatsApp for numbers on the network and not for others', async ({ linked: { alice } }) => {
    const found = await alice.sock!.onWhatsApp('15550002002', '19990000000');
    expect(found).toEqual([{ jid: '15550002002@s.whatsapp.net', exists: true }]);
  });

  it('logs no Baileys errors', ({ linked: { alice, bob } }) => {
    expect(alice.unexpectedErrors).toEqual([]);
    expect(bob.unexpectedErrors).toEqual([]);
  });
});
