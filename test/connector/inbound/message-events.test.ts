import { Readable } from 'node:stream';
import { proto } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { findMessage } from '../../../core/store/messages.js';
import type { InboundContext } from '../../../connector/inbound/pipeline.js';
import { groupStatusOf, type GroupReceipt } from '../../../connector/inbound/group-receipts.js';
import { GROUP, PEER, SECONDS, SELF_JID, useInboundStack, waMessage } from './fixtures.js';
import { webhookEvents as drainWebhookEvents } from './webhook-events.js';

const inbound = useInboundStack('msgevents');
const ctx: InboundContext = { selfJid: SELF_JID, download: async () => Readable.from([Buffer.from('x')]) };
const webhookEvents = (accountId: string, count: number, deadlineMs?: number) =>
  drainWebhookEvents(inbound.queues, accountId, count, deadlineMs);
const { Status } = proto.WebMessageInfo;
const PEER_LID = '99887766554433@lid';

/** A text the account sent, as the send hands it over (Baileys: PENDING until WhatsApp acks it). */
async function sendOne(accountId: string, text = 'status please') {
  const sent = waMessage({ conversation: text }, { fromMe: true, status: Status.PENDING });
  await inbound.pipeline.handleUpsert(accountId, { messages: [sent], type: 'append' }, ctx);
  return sent.key.id!;
}

describe('message status of messages the account sent', () => {
  it('moves pending -> sent -> delivered -> read, one event per move; a late or repeated receipt changes nothing', async () => {
    const accountId = inbound.newAccount();
    const messageId = await sendOne(accountId);
    expect(await findMessage(inbound.table(), accountId, messageId)).toMatchObject({ status: 'pending', statusAt: expect.any(Number) });

    const at = SECONDS * 1000;
    await inbound.pipeline.handleStatus(accountId, [{ messageId, status: 'sent', at }]);
    await inbound.pipeline.handleStatus(accountId, [{ messageId, status: 'delivered', at: at + 1000 }]);
    await inbound.pipeline.handleStatus(accountId, [{ messageId, status: 'read', at: at + 2000 }]);
    // Late and repeated receipts: never backwards, no event.
    await inbound.pipeline.handleStatus(accountId, [
      { messageId, status: 'delivered', at: at + 3000 },
      { messageId, status: 'read', at: at + 4000 },
      { messageId, status: 'sent', at: at + 5000 },
    ]);

    expect(await findMessage(inbound.table(), accountId, messageId)).toMatchObject({ status: 'read', statusAt: at + 2000 });
    const events = await webhookEvents(accountId, 4, 4_000);
    expect(events).toEqual(
      ['sent', 'delivered', 'read'].map((status, index) => ({
        eventId: `${accountId}:${messageId}:status:${status}`,
        accountId,
        event: 'message.status',
        createdAt: expect.any(Number),
        body: { messageId, chatId: PEER, status, timestamp: at + index * 1000 },
      })),
    );
  });

  it('a receipt that came before the row of its message is applied when the row is written', async () => {
    const accountId = inbound.newAccount();
    const sent = waMessage({ conversation: 'overtaken' }, { fromMe: true, status: Status.PENDING });
    const messageId = sent.key.id!;
    await inbound.pipeline.handleStatus(accountId, [
      { messageId, status: 'sent', at: 1_000 },
      { messageId, status: 'delivered', at: 2_000 },
    ]);
    await inbound.pipeline.handleUpsert(accountId, { messages: [sent], type: 'append' }, ctx);

    expect(await findMessage(inbound.table(), accountId, messageId)).toMatchObject({ status: 'delivered', statusAt: 2_000 });
    const events = await webhookEvents(accountId, 3, 4_000);
    expect(events.map((e) => e.body.status)).toEqual(['sent', 'delivered']);
  });

  it('takes the status Baileys folded into messages.upsert, and applies it to a message stored already', async () => {
    const accountId = inbound.newAccount();
    const folded = waMessage({ conversation: 'folded' }, { fromMe: true, status: Status.DELIVERY_ACK });
    await inbound.pipeline.handleUpsert(accountId, { messages: [folded], type: 'append' }, ctx);
    expect((await findMessage(inbound.table(), accountId, folded.key.id!))?.status).toBe('delivered');

    const messageId = await sendOne(accountId, 'stored, then upserted again with a receipt');
    const again = waMessage({ conversation: 'x' }, { id: messageId, fromMe: true, status: Status.READ });
    await inbound.pipeline.handleUpsert(accountId, { messages: [again], type: 'append' }, ctx);
    expect((await findMessage(inbound.table(), accountId, messageId))?.status).toBe('read');

    const events = await webhookEvents(accountId, 3, 4_000);
    expect(events.map((e) => [e.body.messageId, e.body.status])).toEqual([
      [folded.key.id, 'delivered'],
      [messageId, 'read'],
    ]);
  });

  it('played after read; failed only before delivery; inbound messages have no status', async () => {
    const accountId = inbound.newAccount();
    const voice = await sendOne(accountId, 'a voice note stands in');
    await inbound.pipeline.handleStatus(accountId, [
      { messageId: voice, status: 'read', at: 1 },
      { messageId: voice, status: 'played', at: 2 },
      { messageId: voice, status: 'failed', at: 3 },
    ]);
    expect((await findMessage(inbound.table(), accountId, voice))?.status).toBe('played');

    const refused = await sendOne(accountId, 'refused');
    await inbound.pipeline.handleStatus(accountId, [{ messageId: refused, status: 'failed', at: 4 }]);
    expect((await findMessage(inbound.table(), accountId, refused))?.status).toBe('failed');

    const theirs = waMessage({ conversation: 'inbound' });
    await inbound.pipeline.handleUpsert(accountId, { messages: [theirs], type: 'notify' }, ctx);
    await inbound.pipeline.handleStatus(accountId, [{ messageId: theirs.key.id!, status: 'read', at: 5 }]);
    expect((await findMessage(inbound.table(), accountId, theirs.key.id!))?.status).toBeUndefined();
  });
});

describe('reaction, revoke and edit events', () => {
  it('message.reaction, message.edited and message.revoked carry their fields and stable ids; the edit changes the stored text', async () => {
    const accountId = inbound.newAccount();
    const target = waMessage({ conversation: 'helo' }, { seconds: SECONDS });
    await inbound.pipeline.handleUpsert(accountId, { messages: [target], type: 'notify' }, ctx);
    const targetId = target.key.id!;
    const reaction = waMessage(
      { reactionMessage: { key: { id: targetId, remoteJid: PEER }, text: '🎉', senderTimestampMs: 1_767_000_001_000 } },
      { seconds: SECONDS + 1 },
    );
    const edit = waMessage(
      {
        protocolMessage: {
          type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
          key: { id: targetId, remoteJid: PEER },
          editedMessage: { conversation: 'hello' },
        },
      },
      { seconds: SECONDS + 2 },
    );
    const revoke = waMessage(
      { protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE, key: { id: targetId, remoteJid: PEER } } },
      { seconds: SECONDS + 3 },
    );
    await inbound.pipeline.handleUpsert(accountId, { messages: [reaction, edit], type: 'notify' }, ctx);
    expect((await findMessage(inbound.table(), accountId, targetId))?.text).toBe('hello');
    await inbound.pipeline.handleUpsert(accountId, { messages: [revoke], type: 'notify' }, ctx);

    const events = await webhookEvents(accountId, 5, 4_000);
    expect(events.filter((e) => e.event !== 'message')).toEqual([
      {
        eventId: `${accountId}:${reaction.key.id}:reaction`,
        accountId,
        event: 'message.reaction',
        createdAt: expect.any(Number),
        body: { messageId: targetId, chatId: PEER, from: PEER, emoji: '🎉', timestamp: 1_767_000_001_000 },
      },
      {
        eventId: `${accountId}:${edit.key.id}:edited`,
        accountId,
        event: 'message.edited',
        createdAt: expect.any(Number),
        body: { messageId: targetId, chatId: PEER, from: PEER, text: 'hello', timestamp: (SECONDS + 2) * 1000 },
      },
      {
        eventId: `${accountId}:${targetId}:revoked`,
        accountId,
        event: 'message.revoked',
        createdAt: expect.any(Number),
        body: { messageId: targetId, chatId: PEER, from: PEER, timestamp: (SECONDS + 3) * 1000 },
      },
    ]);
  });
});

describe('fromPn / fromLid on the message event', () => {
  it('are set when WhatsApp gave both addressings of the sender, and absent otherwise', async () => {
    const accountId = inbound.newAccount();
    // As Baileys decodes a one-to-one message: an empty participant beside the alt JID.
    const viaLid = waMessage({ conversation: 'from a lid' }, { remoteJid: PEER_LID, remoteJidAlt: PEER });
    viaLid.key.participant = '';
    const plain = waMessage({ conversation: 'pn only' });
    await inbound.pipeline.handleUpsert(accountId, { messages: [viaLid, plain], type: 'notify' }, ctx);

    const events = await webhookEvents(accountId, 2);
    expect(events.find((e) => e.body.messageId === viaLid.key.id)?.body).toMatchObject({
      from: PEER,
      chatId: PEER,
      fromPn: PEER,
      fromLid: PEER_LID,
    });
    const plainBody = events.find((e) => e.body.messageId === plain.key.id)?.body;
    expect(plainBody).toBeDefined();
    expect(plainBody).not.toHaveProperty('fromPn');
    expect(plainBody).not.toHaveProperty('fromLid');
  });

  it('a group message carries participant and the participant addressings', async () => {
    const accountId = inbound.newAccount();
    const group = '120363000000000042@g.us';
    const msg = waMessage({ conversation: 'hi group' }, { remoteJid: group, participant: PEER_LID, participantAlt: PEER });
    await inbound.pipeline.handleUpsert(accountId, { messages: [msg], type: 'notify' }, ctx);
    const [event] = await webhookEvents(accountId, 1);
    expect(event?.body).toMatchObject({ chatId: group, from: PEER, participant: PEER, fromPn: PEER, fromLid: PEER_LID });
  });
});

describe('the group rule', () => {
  const ANN = ['15550003333@s.whatsapp.net', '11112222333344@lid'];
  const BEN = ['15550004444@s.whatsapp.net'];

  it('delivered once every other member has it (a read says so too), read once every one read it', () => {
    const members = [ANN, BEN];
    const none = new Set<string>();
    expect(groupStatusOf(members, new Set([ANN[1]!]), none)).toBeUndefined();
    expect(groupStatusOf(members, new Set([ANN[1]!, BEN[0]!]), none)).toBe('delivered');
    expect(groupStatusOf(members, new Set([BEN[0]!]), new Set([ANN[0]!]))).toBe('delivered');
    expect(groupStatusOf(members, new Set([ANN[0]!, BEN[0]!]), new Set([ANN[0]!]))).toBe('delivered');
    expect(groupStatusOf(members, none, new Set([ANN[1]!, BEN[0]!]))).toBe('read');
    expect(groupStatusOf([], none, none)).toBeUndefined();
  });

  it('moves a message sent to a group with its members receipts, one event per move', async () => {
    const accountId = inbound.newAccount();
    const sent = waMessage({ conversation: 'hello group' }, { fromMe: true, remoteJid: GROUP, status: Status.PENDING });
    const messageId = sent.key.id!;
    await inbound.pipeline.handleUpsert(accountId, { messages: [sent], type: 'append' }, ctx);
    const members = async () => [ANN, BEN];
    const receipt = (userJid: string, kind: GroupReceipt['kind'], at: number): GroupReceipt => ({ messageId, userJid, kind, at });
    const status = async () => (await findMessage(inbound.table(), accountId, messageId))?.status;

    await inbound.pipeline.handleGroupReceipts(accountId, GROUP, [receipt(ANN[1]!, 'delivered', 1_000)], members);
    expect(await status()).toBe('pending');
    await inbound.pipeline.handleGroupReceipts(accountId, GROUP, [receipt(BEN[0]!, 'delivered', 2_000)], members);
    expect(await status()).toBe('delivered');
    await inbound.pipeline.handleGroupReceipts(
      accountId,
      GROUP,
      [receipt(ANN[0]!, 'read', 3_000), receipt(BEN[0]!, 'delivered', 3_500), receipt(ANN[0]!, 'read', 3_600)],
      members,
    );
    expect(await status()).toBe('delivered');
    await inbound.pipeline.handleGroupReceipts(accountId, GROUP, [receipt(BEN[0]!, 'read', 4_000)], members);
    expect(await findMessage(inbound.table(), accountId, messageId)).toMatchObject({ status: 'read', statusAt: 4_000 });

    const events = await webhookEvents(accountId, 3, 4_000);
    expect(events.map((e) => [e.body.status, e.body.chatId, e.body.timestamp])).toEqual([
      ['delivered', GROUP, 2_000],
      ['read', GROUP, 4_000],
    ]);
  });
});
