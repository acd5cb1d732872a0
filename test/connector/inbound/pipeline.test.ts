import { Readable } from 'node:stream';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { getStream } from '../../../core/media-store.js';
import { mediaStoreOf } from '../../../core/media-store.js';
import { findChat } from '../../../core/store/chats.js';
import { findMedia } from '../../../core/store/media.js';
import { findMessage, findMessageRecord, putMessageIfAbsent } from '../../../core/store/messages.js';
import { createInboundPipeline, type InboundContext } from '../../../connector/inbound/pipeline.js';
import { silentLogger } from '../../support/test-stack.js';
import { waitFor } from '../../support/wait.js';
import type { WebhookEvent } from '../../../core/schemas/webhook-event.js';
import { mediaCommon, nextId, PEER, SECONDS, SELF, SELF_JID, useInboundStack, waMessage } from './fixtures.js';
import { webhookEvents as drainWebhookEvents } from './webhook-events.js';
import { voteMessage } from '../../e2e/support/poll-vote.js';

const inbound = useInboundStack('inbound');

/** Serves `bytes` for every download; counts calls. */
function context(bytes: Buffer | Error = Buffer.from('media-bytes')): InboundContext & { downloads: number } {
  const ctx = {
    selfJid: SELF_JID,
    downloads: 0,
    async download(_message: WAMessage): Promise<Readable> {
      ctx.downloads += 1;
      if (bytes instanceof Error) throw bytes;
      return Readable.from([bytes]);
    },
  };
  return ctx;
}

/** The webhook events of `accountId` (see webhook-events.ts). */
const webhookEvents = (accountId: string, count: number, deadlineMs?: number) =>
  drainWebhookEvents(inbound.queues, accountId, count, deadlineMs);

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

describe('inbound pipeline', () => {
  it('stores a text message and its chat, then enqueues the spec payload', async () => {
    const accountId = inbound.newAccount();
    const msg = waMessage({ conversation: 'hello' }, { pushName: 'Alice' });
    await inbound.pipeline.handleUpsert(accountId, { messages: [msg], type: 'notify' }, context());

    const stored = await findMessage(inbound.table(), accountId, msg.key.id!);
    expect(stored).toMatchObject({ type: 'text', text: 'hello', from: PEER, chatId: PEER, fromMe: false, timestamp: SECONDS * 1000 });
    expect(await findChat(inbound.table(), accountId, PEER)).toEqual({
      chatId: PEER,
      name: 'Alice',
      unreadCount: 1,
      lastMessageTime: SECONDS * 1000,
    });

    const [event] = await webhookEvents(accountId, 1);
    expect(event).toEqual({
      eventId: `${accountId}:${msg.key.id}`,
      accountId,
      event: 'message',
      createdAt: expect.any(Number),
      body: {
        from: PEER,
        message: 'hello',
        messageId: msg.key.id,
        timestamp: SECONDS * 1000,
        chatId: PEER,
        fromMe: false,
        type: 'text',
      },
    });
  });

  it('stores a redelivered message once: one row, unread counted once, one event', async () => {
    const accountId = inbound.newAccount();
    const msg = waMessage({ conversation: 'again' });
    const ctx = context();
    await inbound.pipeline.handleUpsert(accountId, { messages: [msg], type: 'notify' }, ctx);
    await inbound.pipeline.handleUpsert(accountId, { messages: [msg], type: 'notify' }, ctx);
    expect((await findChat(inbound.table(), accountId, PEER))?.unreadCount).toBe(1);
    expect(await webhookEvents(accountId, 2, 4_000)).toHaveLength(1);
  });

  describe('messages of consecutive upserts handled together (handleMessages)', () => {
    const OTHER = '15550003333@s.whatsapp.net';

    it('stores each message once, counts the unread messages of each chat, and enqueues one event each, in order', async () => {
      const accountId = inbound.newAccount();
      const fromPeer = [1, 2, 3].map((n) => waMessage({ conversation: `peer ${n}` }, { pushName: 'Peer', seconds: SECONDS + n }));
      const fromOther = [1, 2].map((n) => waMessage({ conversation: `other ${n}` }, { remoteJid: OTHER, seconds: SECONDS + 10 + n }));
      const messages = [fromPeer[0]!, fromOther[0]!, fromPeer[1]!, fromPeer[2]!, fromOther[1]!];
      const handled = await inbound.pipeline.handleMessages(
        accountId,
        messages.map((message) => ({ message, type: 'notify' as const })),
        context(),
      );
      expect(handled).toEqual([true, true, true, true, true]);
      for (const msg of messages) expect(await findMessage(inbound.table(), accountId, msg.key.id!)).toBeDefined();
      expect(await findChat(inbound.table(), accountId, PEER)).toEqual({
        chatId: PEER,
        name: 'Peer',
        unreadCount: 3,
        lastMessageTime: (SECONDS + 3) * 1000,
      });
      expect(await findChat(inbound.table(), accountId, OTHER)).toMatchObject({ unreadCount: 2, lastMessageTime: (SECONDS + 12) * 1000 });
      const events = await webhookEvents(accountId, 6, 4_000);
      expect(events.map((e) => e.eventId).sort()).toEqual(messages.map((m) => `${accountId}:${m.key.id}`).sort());
      for (const msg of messages) expect((await findMessageRecord(inbound.table(), accountId, msg.key.id!))?.marks).toEqual({});
    });

    it('a message stored already, and one twice in the same batch, are stored once, counted once and posted once', async () => {
      const accountId = inbound.newAccount();
      const stored = waMessage({ conversation: 'stored before' });
      const fresh = waMessage({ conversation: 'new' }, { seconds: SECONDS + 1 });
      await inbound.pipeline.handleUpsert(accountId, { messages: [stored], type: 'notify' }, context());
      expect(await webhookEvents(accountId, 1)).toHaveLength(1);

      const handled = await inbound.pipeline.handleMessages(
        accountId,
        [stored, fresh, fresh].map((message) => ({ message, type: 'notify' as const })),
        context(),
      );
      expect(handled).toEqual([true, true, true]);
      expect((await findChat(inbound.table(), accountId, PEER))?.unreadCount).toBe(2);
      const events = await webhookEvents(accountId, 3, 4_000);
      expect(events.map((e) => e.eventId)).toEqual([`${accountId}:${fresh.key.id}`]);
    });

    it('a live message twice in one batch (its write-ahead record still held) is posted once', async () => {
      const accountId = inbound.newAccount();
      const msg = waMessage({ conversation: 'decrypted twice' });
      const live: InboundContext = { ...context(), writeAhead: () => 'live' };
      const handled = await inbound.pipeline.handleMessages(
        accountId,
        [msg, msg].map((message) => ({ message, type: 'notify' as const })),
        live,
      );
      expect(handled).toEqual([true, true]);
      expect((await findChat(inbound.table(), accountId, PEER))?.unreadCount).toBe(1);
      expect((await webhookEvents(accountId, 2, 4_000)).map((e) => e.eventId)).toEqual([`${accountId}:${msg.key.id}`]);
    });

    it('a reaction after new messages applies to one of them: the messages before it are stored first', async () => {
      const accountId = inbound.newAccount();
      const target = waMessage({ conversation: 'react to this' });
      const before = waMessage({ conversation: 'another' }, { seconds: SECONDS + 1 });
      const reaction = waMessage({
        reactionMessage: { key: { id: target.key.id, remoteJid: PEER, fromMe: false }, text: '👍', senderTimestampMs: 1_767_000_002_000 },
      });
      const after = waMessage({ conversation: 'after the reaction' }, { seconds: SECONDS + 3 });
      const handled = await inbound.pipeline.handleMessages(
        accountId,
        [target, before, reaction, after].map((message) => ({ message, type: 'notify' as const })),
        context(),
      );
      expect(handled).toEqual([true, true, true, true]);
      expect((await findMessage(inbound.table(), accountId, target.key.id!))?.reactions).toEqual([
        { from: PEER, emoji: '👍', timestamp: 1_767_000_002_000 },
      ]);
      expect(await findMessage(inbound.table(), accountId, after.key.id!)).toMatchObject({ text: 'after the reaction' });
      expect((await findChat(inbound.table(), accountId, PEER))?.unreadCount).toBe(3);
    });
  });

  it('a new message leaves no pending-event mark once its event is enqueued', async () => {
    const accountId = inbound.newAccount();
    const msg = waMessage({ conversation: 'marked then cleared' });
    await inbound.pipeline.handleUpsert(accountId, { messages: [msg], type: 'notify' }, context());
    expect((await findMessageRecord(inbound.table(), accountId, msg.key.id!))?.marks).toEqual({});
    expect(await webhookEvents(accountId, 1)).toHaveLength(1);
  });

  it('a stored message whose event is still pending gets it enqueued on redelivery, exactly once', async () => {
    const accountId = inbound.newAccount();
    const msg = waMessage({ conversation: 'stored, then the process died' });
    // As left by a crash between the row's write and the enqueue.
    await putMessageIfAbsent(
      inbound.table(),
      accountId,
      {
        messageId: msg.key.id!,
        from: PEER,
        chatId: PEER,
        timestamp: SECONDS * 1000,
        type: 'text',
        fromMe: false,
        text: 'stored, then the process died',
      },
      { eventPending: true },
    );
    await inbound.pipeline.handleUpsert(accountId, { messages: [msg], type: 'notify' }, context());
    await inbound.pipeline.handleUpsert(accountId, { messages: [msg], type: 'notify' }, context());

    const events = await webhookEvents(accountId, 2, 4_000);
    expect(events.map((e) => e.eventId)).toEqual([`${accountId}:${msg.key.id}`]);
    expect(events[0]?.body).toMatchObject({ message: 'stored, then the process died', from: PEER, type: 'text' });
    expect((await findMessageRecord(inbound.table(), accountId, msg.key.id!))?.marks).toEqual({});
  });

  it('an edit of a message whose event is pending keeps the mark: the redelivery still enqueues it', async () => {
    const accountId = inbound.newAccount();
    const msg = waMessage({ conversation: 'helo' });
    await putMessageIfAbsent(
      inbound.table(),
      accountId,
      { messageId: msg.key.id!, from: PEER, chatId: PEER, timestamp: SECONDS * 1000, type: 'text', fromMe: false, text: 'helo' },
      { eventPending: true },
    );
    const edit = waMessage({
      protocolMessage: {
        type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
        key: { id: msg.key.id, remoteJid: PEER },
        editedMessage: { conversation: 'hello' },
      },
    });
    await inbound.pipeline.handleUpsert(accountId, { messages: [edit], type: 'notify' }, context());
    expect((await findMessageRecord(inbound.table(), accountId, msg.key.id!))?.marks).toEqual({ eventPending: true });
    await inbound.pipeline.handleUpsert(accountId, { messages: [msg], type: 'notify' }, context());
    const events = await webhookEvents(accountId, 2);
    expect(events.map((e) => e.event)).toEqual(['message.edited', 'message']);
    expect(events[1]?.body.message).toBe('hello');
  });

  it('stores messages sent from the phone (fromMe) without unread and without a webhook event', async () => {
    const accountId = inbound.newAccount();
    const mine = waMessage({ conversation: 'from my phone' }, { fromMe: true, pushName: 'Me' });
    const theirs = waMessage({ conversation: 'reply' }, { seconds: SECONDS + 5 });
    await inbound.pipeline.handleUpsert(accountId, { messages: [mine], type: 'append' }, context());
    await inbound.pipeline.handleUpsert(accountId, { messages: [theirs], type: 'notify' }, context());

    expect(await findMessage(inbound.table(), accountId, mine.key.id!)).toMatchObject({ fromMe: true, from: SELF, text: 'from my phone' });
    const chat = await findChat(inbound.table(), accountId, PEER);
    expect(chat).toMatchObject({ unreadCount: 1, lastMessageTime: (SECONDS + 5) * 1000, name: '+15550002222' });
    const events = await webhookEvents(accountId, 3, 4_000);
    expect(events.filter((e) => e.event === 'message').map((e) => e.body.messageId)).toEqual([theirs.key.id]);
  });

  it('with WEBHOOK_INCLUDE_FROM_ME=true, messages sent from the phone are delivered too', async () => {
    const accountId = inbound.newAccount();
    const config = { ...inbound.stack.config, WEBHOOK_INCLUDE_FROM_ME: true };
    const including = createInboundPipeline({ config, clients: inbound.stack.clients, logger: silentLogger, queues: inbound.queues });
    const mine = waMessage({ conversation: 'from my phone' }, { fromMe: true });
    await including.handleUpsert(accountId, { messages: [mine], type: 'append' }, context());
    const [event] = await webhookEvents(accountId, 1);
    expect(event?.body).toMatchObject({ fromMe: true, from: SELF, messageId: mine.key.id });
  });

  it("the account's own poll vote is kept on the poll, and posted only with WEBHOOK_INCLUDE_FROM_ME", async () => {
    const config = { ...inbound.stack.config, WEBHOOK_INCLUDE_FROM_ME: true };
    const including = createInboundPipeline({ config, clients: inbound.stack.clients, logger: silentLogger, queues: inbound.queues });
    for (const [pipeline, posted] of [
      [inbound.pipeline, false],
      [including, true],
    ] as const) {
      const accountId = inbound.newAccount();
      const poll = waMessage(
        {
          pollCreationMessageV3: { name: 'lunch?', options: [{ optionName: 'Pizza' }, { optionName: 'Soup' }], selectableOptionsCount: 1 },
          messageContextInfo: { messageSecret: new Uint8Array(32).fill(9) },
        },
        { fromMe: true },
      );
      await pipeline.handleUpsert(accountId, { messages: [poll], type: 'append' }, context());
      const vote = waMessage(voteMessage(poll, SELF, SELF, ['Soup']), { fromMe: true, seconds: SECONDS + 1 });
      await pipeline.handleUpsert(accountId, { messages: [vote], type: 'append' }, context());

      expect(await findMessage(inbound.table(), accountId, poll.key.id!)).toMatchObject({
        pollVotes: [{ from: SELF, selected: ['Soup'] }],
      });
      // Posted: among the account's events (the poll's own come too, in any order), once its
      // hand-off is done (the handling does not wait for it). Not posted: not within 3 s.
      const events: WebhookEvent[] = [];
      const hasVote = () => events.some((e) => e.event === 'message.poll_vote');
      if (posted) {
        await waitFor('the vote event', async () => {
          events.push(...(await webhookEvents(accountId, 1, 2_000)));
          return hasVote();
        });
      } else events.push(...(await webhookEvents(accountId, 10, 3_000)));
      expect(hasVote()).toBe(posted);
    }
  });

  it('keeps lastMessageTime at the newest message when an older one arrives late', async () => {
    const accountId = inbound.newAccount();
    await inbound.pipeline.handleUpsert(
      accountId,
      { messages: [waMessage({ conversation: 'new' }, { seconds: SECONDS + 100 })], type: 'notify' },
      context(),
    );
    await inbound.pipeline.handleUpsert(
      accountId,
      { messages: [waMessage({ conversation: 'old' }, { seconds: SECONDS })], type: 'notify' },
      context(),
    );
    expect(await findChat(inbound.table(), accountId, PEER)).toMatchObject({ lastMessageTime: (SECONDS + 100) * 1000, unreadCount: 2 });
  });

  it('stores image media once in S3 with mimetype and size, served by mediaId', async () => {
    const accountId = inbound.newAccount();
    const bytes = Buffer.from('\x89PNG fake image bytes');
    const msg = waMessage({ imageMessage: { ...mediaCommon, mimetype: 'image/png', caption: 'pic' } });
    const ctx = context(bytes);
    await inbound.pipeline.handleUpsert(accountId, { messages: [msg], type: 'notify' }, ctx);
    await inbound.pipeline.handleUpsert(accountId, { messages: [msg], type: 'notify' }, ctx);
    expect(ctx.downloads).toBe(1);

    const stored = await findMessage(inbound.table(), accountId, msg.key.id!);
    expect(stored).toMatchObject({ type: 'image', hasMedia: true, caption: 'pic', mimetype: 'image/png', fileLength: bytes.length });
    const media = await findMedia(inbound.table(), accountId, stored!.mediaId!);
    expect(media).toMatchObject({ messageId: msg.key.id, mimetype: 'image/png', size: bytes.length });
    const object = await getStream(mediaStoreOf(inbound.stack.config, inbound.stack.clients), media!.s3Key);
    expect(object?.contentType).toBe('image/png');
    expect(await readAll(object!.body)).toEqual(bytes);

    const [event] = await webhookEvents(accountId, 1);
    expect(event?.body).toMatchObject({ type: 'image', message: 'pic' });
  });

  it('stores every media kind with its fields (voice note, video, document, sticker)', async () => {
    const accountId = inbound.newAccount();
    const voice = waMessage({ audioMessage: { ...mediaCommon, mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: 4 } });
    const video = waMessage({ videoMessage: { ...mediaCommon, mimetype: 'video/mp4', seconds: 2 } });
    const doc = waMessage({ documentMessage: { ...mediaCommon, mimetype: 'application/pdf', fileName: 'r.pdf' } });
    const sticker = waMessage({ stickerMessage: { ...mediaCommon, mimetype: 'image/webp' } });
    await inbound.pipeline.handleUpsert(accountId, { messages: [voice, video, doc, sticker], type: 'notify' }, context());

    expect(await findMessage(inbound.table(), accountId, voice.key.id!)).toMatchObject({
      type: 'audio',
      ptt: true,
      seconds: 4,
      hasMedia: true,
    });
    expect(await findMessage(inbound.table(), accountId, video.key.id!)).toMatchObject({ type: 'video', seconds: 2, hasMedia: true });
    const storedDoc = await findMessage(inbound.table(), accountId, doc.key.id!);
    expect(storedDoc).toMatchObject({ type: 'document', fileName: 'r.pdf', hasMedia: true });
    expect(await findMedia(inbound.table(), accountId, storedDoc!.mediaId!)).toMatchObject({
      fileName: 'r.pdf',
      mimetype: 'application/pdf',
    });
    expect((await findMessage(inbound.table(), accountId, sticker.key.id!))?.mediaId).toBeDefined();
    expect(await findChat(inbound.table(), accountId, PEER)).toMatchObject({ unreadCount: 4 });
  });

  it('keeps the message row when the media download fails', async () => {
    const accountId = inbound.newAccount();
    const msg = waMessage({ videoMessage: { ...mediaCommon, mimetype: 'video/mp4', caption: 'lost' } });
    await inbound.pipeline.handleUpsert(accountId, { messages: [msg], type: 'notify' }, context(new Error('media host unreachable')));
    const stored = await findMessage(inbound.table(), accountId, msg.key.id!);
    expect(stored).toMatchObject({ type: 'video', hasMedia: true, caption: 'lost', mediaError: 'media could not be downloaded' });
    expect(stored?.mediaId).toBeUndefined();
    expect(await webhookEvents(accountId, 1)).toHaveLength(1);
  });

  it('gives up on a stalled media download after the timeout and keeps the message', async () => {
    const accountId = inbound.newAccount();
    const quick = createInboundPipeline({
      config: inbound.stack.config,
      clients: inbound.stack.clients,
      logger: silentLogger,
      queues: inbound.queues,
      mediaTimeoutMs: 500,
    });
    const stalled = new Readable({ read() {} });
    stalled.push(Buffer.from('first bytes, then nothing'));
    const ctx: InboundContext = { selfJid: SELF_JID, download: async () => stalled };
    const msg = waMessage({ imageMessage: { ...mediaCommon, mimetype: 'image/jpeg' } });
    await quick.handleUpsert(accountId, { messages: [msg], type: 'notify' }, ctx);
    const stored = await findMessage(inbound.table(), accountId, msg.key.id!);
    expect(stored).toMatchObject({ type: 'image', hasMedia: true, mediaError: 'media download timed out' });
    expect(stored?.mediaId).toBeUndefined();
    expect(stalled.destroyed).toBe(true);
  });

  it('applies reactions to the stored message instead of adding rows', async () => {
    const accountId = inbound.newAccount();
    const target = waMessage({ conversation: 'react to me' }, { fromMe: true });
    const react = (emoji: string) =>
      waMessage({
        reactionMessage: { key: { id: target.key.id, remoteJid: PEER, fromMe: false }, text: emoji, senderTimestampMs: 1_767_000_001_000 },
      });
    const first = react('👍');
    await inbound.pipeline.handleUpsert(accountId, { messages: [target, first], type: 'notify' }, context());
    expect((await findMessage(inbound.table(), accountId, target.key.id!))?.reactions).toEqual([
      { from: PEER, emoji: '👍', timestamp: 1_767_000_001_000 },
    ]);
    expect(await findMessage(inbound.table(), accountId, first.key.id!)).toBeUndefined();

    await inbound.pipeline.handleUpsert(accountId, { messages: [react('❤️')], type: 'notify' }, context());
    expect((await findMessage(inbound.table(), accountId, target.key.id!))?.reactions?.map((r) => r.emoji)).toEqual(['❤️']);
    await inbound.pipeline.handleUpsert(accountId, { messages: [react('')], type: 'notify' }, context());
    expect((await findMessage(inbound.table(), accountId, target.key.id!))?.reactions).toBeUndefined();
    // One message.reaction event per reaction (the target is the account's own: no message event,
    // but its status event, `sent`).
    const events = await webhookEvents(accountId, 5, 3_000);
    expect(events.filter((e) => e.event === 'message.status').map((e) => e.body.status)).toEqual(['sent']);
    expect(events.filter((e) => e.event !== 'message.status').map((e) => [e.event, e.body.emoji])).toEqual([
      ['message.reaction', '👍'],
      ['message.reaction', '❤️'],
      ['message.reaction', ''],
    ]);
  });

  it('applies an edit to the stored text instead of adding a row', async () => {
    const accountId = inbound.newAccount();
    const target = waMessage({ conversation: 'helo' });
    const edit = waMessage({
      protocolMessage: {
        type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
        key: { id: target.key.id, remoteJid: PEER },
        editedMessage: { extendedTextMessage: { text: 'hello' } },
      },
    });
    await inbound.pipeline.handleUpsert(accountId, { messages: [target, edit], type: 'notify' }, context());
    expect(await findMessage(inbound.table(), accountId, target.key.id!)).toMatchObject({ text: 'hello', type: 'text' });
    expect(await findMessage(inbound.table(), accountId, edit.key.id!)).toBeUndefined();
  });

  it('ignores a revoke or reaction naming a message of another chat', async () => {
    const accountId = inbound.newAccount();
    const target = waMessage({ conversation: 'mine to keep' });
    const other = '15550009999@s.whatsapp.net';
    const revoke = waMessage(
      { protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE, key: { id: target.key.id, remoteJid: other } } },
      { remoteJid: other },
    );
    const react = waMessage({ reactionMessage: { key: { id: target.key.id, remoteJid: other }, text: '😈' } }, { remoteJid: other });
    await inbound.pipeline.handleUpsert(accountId, { messages: [target, revoke, react], type: 'notify' }, context());
    const stored = await findMessage(inbound.table(), accountId, target.key.id!);
    expect(stored).toMatchObject({ text: 'mine to keep' });
    expect(stored?.revoked).toBeUndefined();
    expect(stored?.reactions).toBeUndefined();
  });

  it('marks a revoked message instead of adding a row, and skips status broadcasts', async () => {
    const accountId = inbound.newAccount();
    const target = waMessage({ conversation: 'oops' });
    const revoke = waMessage({
      protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE, key: { id: target.key.id, remoteJid: PEER } },
    });
    const status = waMessage({ conversation: 'my story' }, { remoteJid: 'status@broadcast', participant: PEER, id: nextId() });
    await inbound.pipeline.handleUpsert(accountId, { messages: [target, revoke, status], type: 'notify' }, context());

    const stored = await findMessage(inbound.table(), accountId, target.key.id!);
    expect(stored).toMatchObject({ revoked: true, type: 'text' });
    expect(stored?.text).toBeUndefined();
    expect(await findMessage(inbound.table(), accountId, revoke.key.id!)).toBeUndefined();
    expect(await findMessage(inbound.table(), accountId, status.key.id!)).toBeUndefined();
  });
});
