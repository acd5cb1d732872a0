import type { WAMessage } from '@whiskeysockets/baileys';
import { BoundedCache } from '../../core/bounded-cache.js';
import type { Logger } from '../../core/logger.js';
import { forwardMoves, isForwardMove, statusEventFor, type StatusMove } from '../../core/message-status.js';
import type { Message } from '../../core/schemas/message.js';
import { KeyedSerial } from '../../core/serial.js';
import type { ChatWriter } from '../../core/store/chat-writer.js';
import type { ChatChange } from '../../core/store/chats.js';
import { addGroupReceipt, advanceMessageStatus, findMessageRecord, type MessageMarks } from '../../core/store/messages.js';
import type { Table } from '../../core/store/table.js';
import { InterruptedSends } from '../commands/interrupted-sends.js';
import type { EventOutbox } from './event-outbox.js';
import type { EventPublisher } from './event-publisher.js';
import { groupStatusOf, type GroupReceipt, type GroupRecipients } from './group-receipts.js';
import type { InboundPipeline, StatusUpdate } from './pipeline.js';
import { EarlyStatuses, statusFromBaileys } from './status.js';

/**
 * The status of the messages the account sent: receipts (WhatsApp's ack, the other side's
 * delivery and read receipts, group members' receipts) move a sent message forward, never
 * backwards, each move with its `message.status` event. A receipt can come before the row of its
 * message is written; it is kept for that write, which takes the message's status lock as the
 * receipts do. The same lock covers the resolving of an interrupted send, whose evidence is a
 * receipt (commands/interrupted-sends.ts). The receipts of one batch are held in the event
 * outbox (event-outbox.ts) from before their row writes until their events are enqueued.
 */

/** Sent group messages whose members' receipts may wait for the row, at most (each kept two minutes). */
const EARLY_GROUP_RECEIPTS_LIMIT = 10_000;

interface EarlyGroupReceipts {
  groupJid: string;
  receipts: GroupReceipt[];
  recipients: () => Promise<GroupRecipients | undefined>;
}

/**
 * Receipts one outbox item holds at most: about 10 KB. A login can hand over thousands at once
 * (the receipts that waited while the account was offline), beyond DynamoDB's 400 KB an item.
 */
const RECEIPTS_PER_OUTBOX_ITEM = 100;

/** The key of one message's status lock, early receipts and interrupted send. */
const statusKey = (accountId: string, messageId: string) => `${accountId}\n${messageId}`;

export interface SentStatusDeps {
  table: Table;
  events: EventPublisher;
  chats: ChatWriter;
  outbox: EventOutbox;
  logger: Logger;
}

export type SentStatus = ReturnType<typeof sentStatusOf>;

export function sentStatusOf({ table, events, chats, outbox, logger }: SentStatusDeps) {
  /** A message's status write and the write of its row exclude each other (early receipts). */
  const statusLocks = new KeyedSerial();
  const earlyStatuses = new EarlyStatuses();
  const interruptedSends = new InterruptedSends(table, earlyStatuses);
  /** Group receipts for messages the account sent whose row is still to come (a phone member acks at once). */
  const earlyGroupReceipts = new BoundedCache<string, EarlyGroupReceipts>('early-group-receipts', EARLY_GROUP_RECEIPTS_LIMIT, 2 * 60_000);

  /** Enqueues the `message.status` events of moves already written. */
  async function sendStatusEvents(accountId: string, messageId: string, chatId: string, moves: readonly StatusMove[]) {
    for (const move of moves) {
      if (move.status !== 'pending') await events.publish(statusEventFor(accountId, messageId, chatId, move));
    }
  }

  /**
   * One receipt: a single conditional write moves the message forward, then its event goes out
   * (its hand-off added to `handOffs`, not awaited). A message not stored yet keeps the receipt
   * for the write of its row.
   */
  async function applyStatus(accountId: string, update: StatusUpdate, handOffs: Promise<void>[]) {
    const key = statusKey(accountId, update.messageId);
    const chatId = await statusLocks.run(key, async () => {
      const moved = await advanceMessageStatus(table, accountId, update.messageId, update.status, update.at);
      const move = { status: update.status, at: update.at };
      // Not moved: a duplicate, a late (backward) receipt, or a row still to come (or never: a
      // send whose connector stopped before storing it).
      if (moved === undefined) earlyStatuses.remember(key, move);
      // A send left `unknown` by a connector that stopped mid-send is resolved by its receipt.
      if (await interruptedSends.receipt(key, accountId, update.messageId, move)) {
        logger.info({ accountId, messageId: update.messageId, status: update.status }, 'interrupted send settled as sent by its receipt');
      }
      return moved;
    });
    if (chatId === undefined) return;
    const handOff = sendStatusEvents(accountId, update.messageId, chatId, [update]);
    // Awaited with the others of the item; a rejection before then is not an unhandled one.
    handOff.catch(() => undefined);
    handOffs.push(handOff);
  }

  /**
   * Receipts handed over together, held by one outbox item from before the first row write until
   * the last event is handed off (served, or its retry queued); each applied as `applyStatus`.
   * The hand-offs are not awaited: a slow receiver holds the item, not the account's next
   * receipts and messages. The first failure is thrown after the others were tried, and keeps
   * the item for a replay, as a failed hand-off does.
   */
  async function applyStatuses(accountId: string, updates: readonly StatusUpdate[]) {
    let firstError: unknown;
    for (let from = 0; from < updates.length; from += RECEIPTS_PER_OUTBOX_ITEM) {
      const chunk = updates.slice(from, from + RECEIPTS_PER_OUTBOX_ITEM);
      const held = await outbox.hold(accountId, { receipts: chunk.map(({ messageId, status, at }) => ({ messageId, status, at })) });
      const handOffs: Promise<void>[] = [];
      let failed = false;
      for (const update of chunk) {
        try {
          await applyStatus(accountId, update, handOffs);
        } catch (error) {
          failed = true;
          firstError ??= error;
          logger.error({ accountId, messageId: update.messageId, status: update.status, err: error }, 'message status update failed');
        }
      }
      if (failed) {
        // The replay applies the chunk again; the hand-offs under way still go out.
        outbox.failed(held);
        for (const handOff of handOffs) handOff.catch(() => undefined);
      } else
        outbox.doneWhen(
          held,
          Promise.all(handOffs).then(() => undefined),
        );
    }
    if (firstError) throw firstError;
  }

  /**
   * A receipt of an outbox item left behind: applied again, and its event enqueued when the row
   * is at that status or beyond, since the move may have been written before the process died
   * without its event. A receipt that had moved nothing then (a late one) gets its event too:
   * truthful (the message did get there) and under the id a move to it would have had.
   */
  async function replayReceipt(accountId: string, receipt: StatusUpdate) {
    const key = statusKey(accountId, receipt.messageId);
    const chatId = await statusLocks.run(key, async () => {
      const moved = await advanceMessageStatus(table, accountId, receipt.messageId, receipt.status, receipt.at);
      if (moved !== undefined) return moved;
      const row = (await findMessageRecord(table, accountId, receipt.messageId))?.message;
      return row?.fromMe && row.status && !isForwardMove(row.status, receipt.status) ? row.chatId : undefined;
    });
    if (chatId !== undefined) await sendStatusEvents(accountId, receipt.messageId, chatId, [receipt]);
  }

  /**
   * Writes the row of a message the account sent unless stored, and its chat's change. It gets
   * its status: the one it came with, moved on by receipts that came before the row. Answers the
   * moves made.
   */
  async function putSentMessage(accountId: string, msg: WAMessage, message: Message, marks: MessageMarks, chat: ChatChange) {
    const key = statusKey(accountId, message.messageId);
    let early: EarlyGroupReceipts | undefined;
    const result = await statusLocks.run(key, async () => {
      early = earlyGroupReceipts.get(key);
      earlyGroupReceipts.delete(key);
      const now = Date.now();
      const initial: StatusMove = { status: statusFromBaileys(msg.status) ?? 'sent', at: now };
      const moves = forwardMoves(undefined, [initial, ...earlyStatuses.take(key, now)]);
      const last = moves[moves.length - 1] ?? initial;
      const withStatus: Message = { ...message, status: last.status, statusAt: last.at };
      if (await chats.putMessageIfAbsent(accountId, withStatus, marks, chat)) return { stored: true, moves };
      // Stored already (a redelivery): what it brings is applied like receipts.
      const applied: StatusMove[] = [];
      for (const move of moves) {
        if (await advanceMessageStatus(table, accountId, message.messageId, move.status, move.at)) applied.push(move);
      }
      return { stored: false, moves: applied };
    });
    if (early) await applyGroupReceipts(accountId, early.groupJid, early.receipts, early.recipients);
    return result;
  }

  /** Records one member's receipt on the sent message; a message not stored yet keeps it for the write of its row. */
  function recordGroupReceipt(
    accountId: string,
    groupJid: string,
    receipt: GroupReceipt,
    recipients: () => Promise<GroupRecipients | undefined>,
  ) {
    const key = statusKey(accountId, receipt.messageId);
    return statusLocks.run(key, async () => {
      const sets = await addGroupReceipt(table, accountId, receipt.messageId, receipt.kind, receipt.userJid);
      if (!sets) {
        const kept = earlyGroupReceipts.get(key);
        earlyGroupReceipts.set(key, { groupJid, receipts: [...(kept?.receipts ?? []), receipt], recipients });
      }
      return sets;
    });
  }

  async function applyGroupReceipts(
    accountId: string,
    groupJid: string,
    receipts: readonly GroupReceipt[],
    recipients: () => Promise<GroupRecipients | undefined>,
  ) {
    let members: GroupRecipients | undefined;
    for (const receipt of receipts) {
      const sets = await recordGroupReceipt(accountId, groupJid, receipt, recipients);
      if (!sets) continue;
      members ??= await recipients();
      if (!members) {
        logger.debug({ accountId, groupJid }, 'group members unknown: group receipts recorded, status not decided');
        return;
      }
      const status = groupStatusOf(members, sets.deliveredTo, sets.readBy);
      if (status && isForwardMove(sets.status, status))
        await applyStatuses(accountId, [{ messageId: receipt.messageId, status, at: receipt.at }]);
    }
  }

  const handlers: Pick<InboundPipeline, 'handleStatus' | 'handleGroupReceipts' | 'resolveInterruptedSend'> = {
    handleStatus: applyStatuses,
    handleGroupReceipts: applyGroupReceipts,
    resolveInterruptedSend(accountId, messageId, reason) {
      const key = statusKey(accountId, messageId);
      return statusLocks.run(key, () => interruptedSends.resolve(key, accountId, messageId, reason));
    },
  };
  return { ...handlers, sendStatusEvents, putSentMessage, replayReceipt };
}
