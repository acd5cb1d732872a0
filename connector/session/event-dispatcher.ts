import {
  isJidGroup,
  jidNormalizedUser,
  type BinaryNode,
  type Contact,
  type ConnectionState,
  type GroupMetadata,
  type MessageUserReceiptUpdate,
  type WACallEvent,
  type WAMessage,
  type WAMessageUpdate,
  type WASocket,
} from '@whiskeysockets/baileys';
import type { Logger } from '../../core/logger.js';
import { SerialQueue } from '../../core/serial.js';
import { withTimeout } from '../../core/with-timeout.js';
import type { InboundContext, InboundPipeline, StatusUpdate, UpsertedMessage } from '../inbound/pipeline.js';
import { statusFromBaileys } from '../inbound/status.js';
import type { GroupReceipt, GroupRecipients } from '../inbound/group-receipts.js';
import { learnOwnPushName } from './push-name.js';

/** The inbound pipeline as the session sees it (connector/inbound implements it). */
export type InboundHandlers = InboundPipeline;

export interface DispatchTargets {
  accountId: string;
  logger: Logger;
  onConnectionUpdate(update: Partial<ConnectionState>): void;
  onCredsUpdate(): void;
  /** The group's metadata, from the session's cache (group-metadata.ts) or asked of WhatsApp. */
  groupMetadata(groupJid: string): Promise<GroupMetadata>;
  inbound: InboundHandlers;
  /** The context of this socket (undefined before the account's own JID is known). */
  inboundContext(): InboundContext | undefined;
  /** Ids this session sent through commands: their echo upsert is already stored by the sender. */
  isOwnCommandSend(messageId: string): boolean;
  /** Told of each upserted message once the pipeline handled it (or failed on it). */
  inbox?: { retire(messageId: string): void; release(messageId: string): void };
  /** Inbound work of this socket starts after this (the previous socket's queue draining). */
  after?: Promise<unknown>;
  /** Incoming calls (connector/session/calls.ts). */
  onCalls?(calls: readonly WACallEvent[]): void;
  /** Contacts reported or updated (contact-book.ts): names from the address book, push names with messages. */
  onContacts?(contacts: readonly Partial<Contact>[]): void;
  /**
   * A notification of the phone's history: true when the history import took it (connector/history/),
   * which then reports it to the write-ahead inbox itself; false sends it on to the pipeline.
   */
  onHistory?(message: WAMessage): boolean;
}

export interface Dispatcher {
  /** Stops taking events from the socket; events already queued are still handled. */
  detach(): void;
  /** Resolves when every queued inbound event has been handled. */
  drained(): Promise<void>;
  /** Queues other inbound work (a write-ahead replay) in order with the socket's events. */
  run(what: string, work: (ctx: InboundContext) => Promise<void>): void;
}

/**
 * The one `sock.ev.process` consumer of a socket. Connection and creds events go to the session
 * at once; message events go to the inbound pipeline through a per-account queue so that a
 * message is stored before a reaction to it or its revocation. Baileys has acknowledged those
 * messages to the network already, so queued work is finished even after the socket closes
 * (its context is taken when the event arrives). Each upserted message is handled on its own
 * and then reported to the write-ahead inbox (retired, or released for a replay when it
 * failed). Listener errors are logged and never thrown back into Baileys' emitter.
 */
export function attachDispatcher(sock: WASocket, targets: DispatchTargets): Dispatcher {
  const inboundQueue = new SerialQueue();
  const after = targets.after;
  if (after)
    void inboundQueue.run(() =>
      after.then(
        () => undefined,
        () => undefined,
      ),
    );
  /** False when the event was skipped (no context yet). */
  const enqueue = (what: string, work: (ctx: InboundContext) => Promise<void>): boolean => {
    const ctx = targets.inboundContext();
    if (!ctx) {
      targets.logger.warn({ accountId: targets.accountId, event: what }, 'inbound event before the account JID is known: skipped');
      return false;
    }
    void inboundQueue.run(async () => {
      try {
        await work(ctx);
      } catch (error) {
        targets.logger.error({ err: error, accountId: targets.accountId, event: what }, 'inbound handler failed');
      }
    });
    return true;
  };

  /**
   * Upserted messages not handled yet. Upserts that arrive while the account's queue is busy wait
   * here and go to the pipeline together in one queued job (the first one's): in a burst, the
   * pipeline writes them in shared requests instead of one message after the other.
   */
  let waiting: UpsertedMessage[] | undefined;
  const queueUpserted = (messages: UpsertedMessage[]) => {
    if (waiting) {
      waiting.push(...messages);
      return;
    }
    const taken = [...messages];
    const queued = enqueue('messages.upsert', async (ctx) => {
      if (waiting === taken) waiting = undefined;
      const handled = await targets.inbound.handleMessages(targets.accountId, taken, ctx).catch((error: unknown) => {
        targets.logger.error({ err: error, accountId: targets.accountId }, 'inbound messages failed');
        return [];
      });
      taken.forEach(({ message }, index) => {
        const id = message.key.id;
        if (!id) return;
        // A failed message was logged by the pipeline (without its contents) and waits for a replay.
        if (handled[index]) targets.inbox?.retire(id);
        else targets.inbox?.release(id);
      });
    });
    if (queued) waiting = taken;
  };

  const detach = sock.ev.process(async (events) => {
    if (events['connection.update']) targets.onConnectionUpdate(events['connection.update']);
    if (events['creds.update']) targets.onCredsUpdate();
    if (events.call) targets.onCalls?.(events.call);
    const contacts = [...(events['contacts.upsert'] ?? []), ...(events['contacts.update'] ?? [])];
    if (contacts.length > 0) targets.onContacts?.(contacts);

    const history = events['messaging-history.set'];
    if (history) {
      // What Baileys processes itself (history-sync.ts): the bootstrap, whose LID mappings it
      // stored, and push names, which may name the account itself (push-name.ts). Conversations
      // are imported from the notifications' upserts (onHistory), never from here.
      targets.logger.debug(
        {
          accountId: targets.accountId,
          syncType: history.syncType,
          chats: history.chats.length,
          contacts: history.contacts.length,
          messages: history.messages.length,
          mappings: history.lidPnMappings?.length ?? 0,
        },
        'history sync processed by Baileys',
      );
      if (learnOwnPushName(sock, history.contacts))
        targets.logger.info({ accountId: targets.accountId }, 'push name learned from the history sync');
      // Names are not conversation history: the contacts it carries are kept whatever is imported.
      if (history.contacts.length > 0) targets.onContacts?.(history.contacts);
    }
    const upsert = events['messages.upsert'];
    const statusUpdates = statusUpdatesOf(events['messages.update'] ?? []);
    if (upsert) {
      const isOwnSendEcho = (m: (typeof upsert.messages)[number]) =>
        upsert.type === 'append' && m.key.fromMe && m.key.id && targets.isOwnCommandSend(m.key.id);
      const messages = upsert.messages.filter((m) => !isOwnSendEcho(m) && !targets.onHistory?.(m));
      // The echo of a command's send is stored by the sender; a receipt Baileys folded into it
      // (it came while the event was buffered) still counts.
      for (const echo of upsert.messages.filter(isOwnSendEcho)) {
        const status = statusFromBaileys(echo.status);
        if (echo.key.id && status && status !== 'pending') statusUpdates.push({ messageId: echo.key.id, status, at: Date.now() });
      }
      if (messages.length > 0) queueUpserted(messages.map((message) => ({ message, type: upsert.type })));
    }
    if (statusUpdates.length > 0) {
      enqueue('messages.update', () => targets.inbound.handleStatus(targets.accountId, statusUpdates));
    }
    // Members' receipts Baileys folded into the echo of a group send (they came while it buffered it).
    const folded = (upsert?.messages ?? []).flatMap((m) =>
      upsert?.type === 'append' && m.key.fromMe ? (m.userReceipt ?? []).map((receipt) => ({ key: m.key, receipt })) : [],
    );
    for (const [groupJid, receipts] of groupReceiptsOf([...(events['message-receipt.update'] ?? []), ...folded])) {
      enqueue('message-receipt.update', () =>
        targets.inbound.handleGroupReceipts(targets.accountId, groupJid, receipts, () => groupMembers.recipients(groupJid)),
      );
    }
  });
  const groupMembers = groupMembersOf(sock, targets.groupMetadata, targets.logger);

  // WhatsApp's ack of a message the account sent: `sent` (Baileys reads only failed acks).
  const onAck = (node: BinaryNode) => {
    const { id, error, t } = node.attrs;
    if (!id || error) return;
    const at = Number(t) > 0 ? Number(t) * 1000 : Date.now();
    enqueue('message ack', () => targets.inbound.handleStatus(targets.accountId, [{ messageId: id, status: 'sent', at }]));
  };
  sock.ws.on(ACK_EVENT, onAck);
  return {
    detach() {
      sock.ws.off(ACK_EVENT, onAck);
      detach();
    },
    drained: () => inboundQueue.drained(),
    run: enqueue,
  };
}

const ACK_EVENT = 'CB:ack,class:message';

const GROUP_MEMBERS_TIMEOUT_MS = 10_000;

/** The members of the account's groups besides the account, each with every JID known for them. */
function groupMembersOf(sock: WASocket, groupMetadata: DispatchTargets['groupMetadata'], logger: Logger) {
  return {
    recipients(groupJid: string): Promise<GroupRecipients | undefined> {
      const self = new Set([sock.user?.id, sock.user?.lid].filter((id): id is string => !!id).map((id) => jidNormalizedUser(id)));
      const forget = (reason: unknown) => {
        logger.debug({ err: reason, groupJid }, 'group members not known');
        return undefined;
      };
      // Bounded: the account's inbound queue waits on it. A busy group sends a receipt per
      // member; the session's metadata cache asks WhatsApp once for all of them.
      return withTimeout(groupMetadata(groupJid), GROUP_MEMBERS_TIMEOUT_MS).then(
        (metadata) =>
          metadata === 'timed_out'
            ? forget('timed out')
            : metadata.participants
                .map((member) =>
                  [member.id, member.phoneNumber, member.lid].filter((id): id is string => !!id).map((id) => jidNormalizedUser(id)),
                )
                .filter((ids) => !ids.some((id) => self.has(id))),
        forget,
      );
    },
  };
}

/** Group members' receipts of messages the account sent, per group (delivered: receiptTimestamp; read or played: readTimestamp). */
function groupReceiptsOf(updates: readonly MessageUserReceiptUpdate[]): Map<string, GroupReceipt[]> {
  const byGroup = new Map<string, GroupReceipt[]>();
  for (const { key, receipt } of updates) {
    if (!key.fromMe || !key.id || !key.remoteJid || !isJidGroup(key.remoteJid) || !receipt.userJid) continue;
    const read = Number(receipt.readTimestamp ?? 0);
    const delivered = Number(receipt.receiptTimestamp ?? 0);
    if (!read && !delivered) continue;
    const receipts = byGroup.get(key.remoteJid) ?? [];
    receipts.push({
      messageId: key.id,
      userJid: jidNormalizedUser(receipt.userJid),
      kind: read ? 'read' : 'delivered',
      at: (read || delivered) * 1000,
    });
    byGroup.set(key.remoteJid, receipts);
  }
  return byGroup;
}

/** The status moves in Baileys' `messages.update` (receipts and failed sends of messages the account sent). */
function statusUpdatesOf(updates: readonly WAMessageUpdate[]): StatusUpdate[] {
  const moves: StatusUpdate[] = [];
  for (const { key, update } of updates) {
    const status = statusFromBaileys(update.status);
    if (!key.fromMe || !key.id || !status || status === 'pending') continue;
    const seconds = Number(update.messageTimestamp ?? 0);
    moves.push({ messageId: key.id, status, at: seconds > 0 ? seconds * 1000 : Date.now() });
  }
  return moves;
}
