import { Readable } from 'node:stream';
import { proto, writeRandomPadMax16 } from '@whiskeysockets/baileys';
import { describe, expect, it, onTestFinished } from 'vitest';
import { findChat } from '../../../core/store/chats.js';
import { listInboxRecords } from '../../../core/store/inbox.js';
import { findMessage, findMessageRecord, putMessageIfAbsent } from '../../../core/store/messages.js';
import { Inbox, InboxClosedError } from '../../../connector/inbound/inbox.js';
import { messageFromInbox, replayInbox } from '../../../connector/inbound/inbox-replay.js';
import { createInboundPipeline, type InboundContext } from '../../../connector/inbound/pipeline.js';
import { countedTable } from '../../support/counted-table.js';
import { silentLogger } from '../../support/test-stack.js';
import { GROUP, nextId, PEER, SECONDS, SELF_JID, useInboundStack } from './fixtures.js';
import { webhookEvents } from './webhook-events.js';

const inbound = useInboundStack('inbox');
const ME = { id: SELF_JID };
const ctx: InboundContext = {
  selfJid: SELF_JID,
  download: async () => Readable.from([Buffer.from('no media here')]),
};

/** What the Signal layer returns for a message: the encoded proto, randomly padded. */
const plaintextOf = (message: proto.IMessage) => writeRandomPadMax16(proto.Message.encode(message).finish());

/** The attributes of a one-to-one `<message>` stanza from PEER. */
const stanzaFrom = (id: string, extra: Record<string, string> = {}) => ({
  id,
  from: PEER,
  t: String(SECONDS),
  type: 'text',
  notify: 'Alice',
  ...extra,
});

/** The session's replay, as it runs it at each login (a replayed message's records outlive its handling). */
const replay = (accountId: string, inbox: Inbox) =>
  replayInbox({
    accountId,
    inbox,
    me: ME,
    logger: silentLogger,
    handleUpsert: (upsert) => inbound.pipeline.handleUpsert(accountId, upsert, { ...ctx, writeAhead: () => 'replay' }),
  });

/** The context of a live socket: a message's records are held while this process handles it. */
const liveContext = (inbox: Inbox): InboundContext => ({
  ...ctx,
  writeAhead: (messageId) => (inbox.holds(messageId) ? 'live' : undefined),
});

describe('inbound write-ahead log', () => {
  it('a record left behind by a process that died after the receipt is stored and enqueued by the replay', async () => {
    const accountId = inbound.newAccount();
    const id = nextId();
    // The process that received it: recorded, receipted, then killed before storing.
    await new Inbox(inbound.table(), accountId, silentLogger).record({
      stanza: stanzaFrom(id),
      part: 0,
      encType: 'msg',
      plaintext: plaintextOf({ conversation: 'receipted, never stored' }),
    });
    const [left] = await listInboxRecords(inbound.table(), accountId);
    expect(left).toMatchObject({ accountId, messageId: id, part: 0, encType: 'msg' });
    expect(left!.expiresAt).toBeGreaterThan(Date.now() / 1000 + 24 * 3600);

    const result = await replay(accountId, new Inbox(inbound.table(), accountId, silentLogger));

    expect(result).toEqual({ replayed: 1, failed: 0 });
    // Stored by the replay: the row's own mark held the event (a redelivery later finds it gone).
    expect((await findMessageRecord(inbound.table(), accountId, id))?.marks).toEqual({});
    expect(await findMessage(inbound.table(), accountId, id)).toMatchObject({
      text: 'receipted, never stored',
      from: PEER,
      chatId: PEER,
      fromMe: false,
      timestamp: SECONDS * 1000,
    });
    expect(await findChat(inbound.table(), accountId, PEER)).toMatchObject({ name: 'Alice', unreadCount: 1 });
    const events = await webhookEvents(inbound.queues, accountId, 1);
    expect(events.map((e) => e.eventId)).toEqual([`${accountId}:${id}`]);
    expect(await listInboxRecords(inbound.table(), accountId)).toEqual([]);
  });

  it('a record of a message stored with its event pending: the replay enqueues the event once and clears the mark', async () => {
    const accountId = inbound.newAccount();
    const id = nextId();
    const inbox = new Inbox(inbound.table(), accountId, silentLogger);
    await inbox.record({ stanza: stanzaFrom(id), part: 0, encType: 'msg', plaintext: plaintextOf({ conversation: 'half done' }) });
    // The process stored the row (with its outbox mark) and died before the enqueue.
    await putMessageIfAbsent(
      inbound.table(),
      accountId,
      { messageId: id, from: PEER, chatId: PEER, timestamp: SECONDS * 1000, type: 'text', fromMe: false, text: 'half done' },
      { eventPending: true },
    );

    await replay(accountId, new Inbox(inbound.table(), accountId, silentLogger));
    await replay(accountId, new Inbox(inbound.table(), accountId, silentLogger));

    const events = await webhookEvents(inbound.queues, accountId, 2, 4_000);
    expect(events.map((e) => e.eventId)).toEqual([`${accountId}:${id}`]);
    expect((await findMessageRecord(inbound.table(), accountId, id))?.marks).toEqual({});
    expect(await listInboxRecords(inbound.table(), accountId)).toEqual([]);
  });

  it('a live message whose record is held: the record holds its event (no mark on the row to remove), enqueued once', async () => {
    const accountId = inbound.newAccount();
    const id = nextId();
    const inbox = new Inbox(inbound.table(), accountId, silentLogger);
    await inbox.record({ stanza: stanzaFrom(id), part: 0, encType: 'msg', plaintext: plaintextOf({ conversation: 'held by its record' }) });
    expect(inbox.holds(id)).toBe(true);
    const message = messageFromInbox(await listInboxRecords(inbound.table(), accountId), ME);

    await inbound.pipeline.handleUpsert(accountId, { messages: [message], type: 'notify' }, liveContext(inbox));
    expect((await findMessageRecord(inbound.table(), accountId, id))?.marks).toEqual({ eventHeldByRecord: true });
    inbox.retire(id);
    await inbox.drained();
    expect(inbox.holds(id)).toBe(false);
    // A redelivery after the record is gone: the event was enqueued, nothing goes again.
    await inbound.pipeline.handleUpsert(accountId, { messages: [message], type: 'notify' }, liveContext(inbox));

    const events = await webhookEvents(inbound.queues, accountId, 2, 4_000);
    expect(events.map((e) => e.eventId)).toEqual([`${accountId}:${id}`]);
    expect(await listInboxRecords(inbound.table(), accountId)).toEqual([]);
  });

  it('a record of a message stored with the record holding its event: the replay enqueues the event once', async () => {
    const accountId = inbound.newAccount();
    const id = nextId();
    await new Inbox(inbound.table(), accountId, silentLogger).record({
      stanza: stanzaFrom(id),
      part: 0,
      encType: 'msg',
      plaintext: plaintextOf({ conversation: 'stored, died before the enqueue' }),
    });
    // The process stored the row, its record holding the event, and died before the enqueue.
    await putMessageIfAbsent(
      inbound.table(),
      accountId,
      {
        messageId: id,
        from: PEER,
        chatId: PEER,
        timestamp: SECONDS * 1000,
        type: 'text',
        fromMe: false,
        text: 'stored, died before the enqueue',
      },
      { eventHeldByRecord: true },
    );

    await replay(accountId, new Inbox(inbound.table(), accountId, silentLogger));
    await replay(accountId, new Inbox(inbound.table(), accountId, silentLogger));

    const events = await webhookEvents(inbound.queues, accountId, 2, 4_000);
    expect(events.map((e) => e.eventId)).toEqual([`${accountId}:${id}`]);
    expect(events[0]?.body).toMatchObject({ message: 'stored, died before the enqueue', from: PEER });
    expect((await findMessageRecord(inbound.table(), accountId, id))?.marks).toEqual({});
    expect(await listInboxRecords(inbound.table(), accountId)).toEqual([]);
  });

  it('a live message handed to straight delivery: its handling ends at once, the record stays until the hand-off, and goes with it (or stays for a replay if it fails)', async () => {
    const accountId = inbound.newAccount();
    const inbox = new Inbox(inbound.table(), accountId, silentLogger);
    const handOffs = new Map<string, { resolve(): void; reject(error: Error): void }>();
    // A publisher whose hand-offs the case settles, as a slow receiver would.
    const events = {
      publish: (event: { eventId: string }) => new Promise<void>((resolve, reject) => handOffs.set(event.eventId, { resolve, reject })),
    };
    const pipeline = createInboundPipeline({ config: inbound.stack.config, clients: inbound.stack.clients, logger: silentLogger, events });
    const live = { ...liveContext(inbox), heldUntil: (messageId: string, handOff: Promise<void>) => inbox.holdUntil(messageId, handOff) };
    const [served, failing] = [nextId(), nextId()];
    for (const id of [served, failing]) {
      await inbox.record({ stanza: stanzaFrom(id), part: 0, encType: 'msg', plaintext: plaintextOf({ conversation: `held ${id}` }) });
      const [message] = [
        messageFromInbox(
          (await listInboxRecords(inbound.table(), accountId)).filter((r) => r.messageId === id),
          ME,
        ),
      ];
      // Resolves with the hand-off still out: the account's next message need not wait for the webhook.
      await pipeline.handleUpsert(accountId, { messages: [message], type: 'notify' }, live);
      inbox.retire(id);
    }
    expect(handOffs.size).toBe(2);
    expect((await listInboxRecords(inbound.table(), accountId)).map((r) => r.messageId).sort()).toEqual([served, failing].sort());
    // Still in this process's hands: not replayed meanwhile.
    expect(await inbox.stranded()).toEqual([]);

    handOffs.get(`${accountId}:${served}`)?.resolve();
    handOffs.get(`${accountId}:${failing}`)?.reject(new Error('queue unreachable'));
    await inbox.drained();
    expect((await listInboxRecords(inbound.table(), accountId)).map((r) => r.messageId)).toEqual([failing]);
    expect((await inbox.stranded()).map((r) => r.messageId)).toEqual([failing]);
  });

  it('records whose upsert this process is still handling are not replayed; settling deletes them', async () => {
    const accountId = inbound.newAccount();
    const id = nextId();
    const inbox = new Inbox(inbound.table(), accountId, silentLogger);
    await inbox.record({ stanza: stanzaFrom(id), part: 0, encType: 'msg', plaintext: plaintextOf({ conversation: 'in flight' }) });
    expect(await inbox.stranded()).toEqual([]);
    expect(await replay(accountId, inbox)).toEqual({ replayed: 0, failed: 0 });
    expect(await findMessage(inbound.table(), accountId, id)).toBeUndefined();

    inbox.retire(id);
    await inbox.drained();
    expect(await listInboxRecords(inbound.table(), accountId)).toEqual([]);
  });

  it('a closed inbox (its session stopped) writes no record and refuses, so that the decryption fails and no receipt leaves', async () => {
    const accountId = inbound.newAccount();
    const before = nextId();
    const after = nextId();
    const inbox = new Inbox(inbound.table(), accountId, silentLogger);
    await inbox.record({
      stanza: stanzaFrom(before),
      part: 0,
      encType: 'msg',
      plaintext: plaintextOf({ conversation: 'before the stop' }),
    });
    inbox.close();
    await expect(
      inbox.record({ stanza: stanzaFrom(after), part: 0, encType: 'msg', plaintext: plaintextOf({ conversation: 'after the stop' }) }),
    ).rejects.toThrow(InboxClosedError);
    // What was recorded before the stop stays for the next owner's replay; nothing came after it.
    expect((await listInboxRecords(inbound.table(), accountId)).map((r) => r.messageId)).toEqual([before]);
  });

  it('a failed handling releases the records: the next replay stores the message', async () => {
    const accountId = inbound.newAccount();
    const id = nextId();
    const inbox = new Inbox(inbound.table(), accountId, silentLogger);
    await inbox.record({ stanza: stanzaFrom(id), part: 0, encType: 'msg', plaintext: plaintextOf({ conversation: 'second chance' }) });
    inbox.release(id);
    expect((await inbox.stranded()).map((r) => r.messageId)).toEqual([id]);
    await replay(accountId, inbox);
    expect(await findMessage(inbound.table(), accountId, id)).toMatchObject({ text: 'second chance' });
  });

  it('an undecodable record is dropped and the others are still replayed', async () => {
    const accountId = inbound.newAccount();
    const bad = nextId();
    const good = nextId();
    const inbox = new Inbox(inbound.table(), accountId, silentLogger);
    await inbox.record({ stanza: stanzaFrom(bad), part: 0, encType: 'msg', plaintext: Buffer.from([1, 2, 3, 250]) });
    await inbox.record({ stanza: stanzaFrom(good), part: 0, encType: 'msg', plaintext: plaintextOf({ conversation: 'fine' }) });

    const result = await replay(accountId, new Inbox(inbound.table(), accountId, silentLogger));

    expect(result).toEqual({ replayed: 1, failed: 0 });
    expect(await findMessage(inbound.table(), accountId, good)).toMatchObject({ text: 'fine' });
    expect(await findMessage(inbound.table(), accountId, bad)).toBeUndefined();
    expect(await listInboxRecords(inbound.table(), accountId)).toEqual([]);
  });

  it('a group message is rebuilt from both decrypted parts (sender key distribution, then content)', () => {
    const id = nextId();
    const stanza = { id, from: GROUP, participant: PEER, t: String(SECONDS), notify: 'Alice', offline: '1' };
    const record = (part: number, encType: string, message: proto.IMessage) => ({
      accountId: 'group',
      messageId: id,
      part,
      encType,
      stanza,
      plaintext: plaintextOf(message),
      receivedAt: 0,
      expiresAt: 0,
    });
    const message = messageFromInbox(
      [
        record(1, 'skmsg', { conversation: 'hello group' }),
        record(0, 'pkmsg', { senderKeyDistributionMessage: { groupId: GROUP, axolotlSenderKeyDistributionMessage: new Uint8Array([1]) } }),
      ],
      ME,
    );
    expect(message.key).toMatchObject({ id, remoteJid: GROUP, participant: PEER, fromMe: false });
    expect(message.message?.conversation).toBe('hello group');
    expect(message.message?.senderKeyDistributionMessage?.groupId).toBe(GROUP);
    expect(message.pushName).toBe('Alice');
    expect(Number(message.messageTimestamp)).toBe(SECONDS);
  });

  it('a periodic replay reads the table only when this process may have left a record: after a failed handling, not after settled ones', async () => {
    const { table, counts, close } = countedTable(inbound.stack.config);
    onTestFinished(close);
    const accountId = inbound.newAccount();
    const inbox = new Inbox(table, accountId, silentLogger);
    const part = (id: string) => ({ stanza: stanzaFrom(id), part: 0, encType: 'msg', plaintext: plaintextOf({ conversation: id }) });
    const queries = () => counts.get('QueryCommand') ?? 0;
    const [settled, failing] = [nextId(), nextId()];

    await inbox.record(part(settled));
    inbox.retire(settled);
    await inbox.drained();
    expect(await inbox.stranded({ onlyIfLeft: true })).toEqual([]);
    expect(queries()).toBe(0);

    await inbox.record(part(failing));
    inbox.release(failing);
    expect((await inbox.stranded({ onlyIfLeft: true })).map((r) => r.messageId)).toEqual([failing]);
    expect(queries()).toBe(1);
    // Read once: nothing new was left since, so the next periodic replay reads nothing; a login's does.
    expect(await inbox.stranded({ onlyIfLeft: true })).toEqual([]);
    expect(queries()).toBe(1);
    expect((await inbox.stranded()).map((r) => r.messageId)).toEqual([failing]);
    expect(queries()).toBe(2);
  });

  it("a settled record's deletion waits for the next record and leaves in the same request", async () => {
    const { table, counts, close } = countedTable(inbound.stack.config);
    onTestFinished(close);
    const accountId = inbound.newAccount();
    const inbox = new Inbox(table, accountId, silentLogger);
    const part = (id: string) => ({ stanza: stanzaFrom(id), part: 0, encType: 'msg', plaintext: plaintextOf({ conversation: id }) });
    const [first, second] = [nextId(), nextId()];

    await inbox.record(part(first));
    expect(counts.get('BatchWriteItemCommand')).toBe(1);
    inbox.retire(first);
    await inbox.record(part(second));
    await inbox.drained();
    // The second record and the first one's deletion: one request, not two.
    expect(counts.get('BatchWriteItemCommand')).toBe(2);
    expect((await listInboxRecords(table, accountId)).map((r) => r.messageId)).toEqual([second]);

    // Alone, a deletion still leaves once its wait is over.
    inbox.retire(second);
    await inbox.drained();
    expect(counts.get('BatchWriteItemCommand')).toBe(3);
    expect(await listInboxRecords(table, accountId)).toEqual([]);
  });
});
