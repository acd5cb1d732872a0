import type { AnyMessageContent, MiscMessageGenerationOptions, WAMessage, WAMessageKey, WASocket } from '@whiskeysockets/baileys';
import { isGroupJid } from '../../core/jid.js';
import { accountObjectPrefix } from '../../core/keys.js';
import type { Logger } from '../../core/logger.js';
import { getStream, type MediaStore } from '../../core/media-store.js';
import type { CommandOf, SendCommand } from '../../core/schemas/command.js';
import type { Message } from '../../core/schemas/message.js';
import { findMessage } from '../../core/store/messages.js';
import { failPendingOutboundPaused, markOutboundFailed, markOutboundSent, outboundRecords } from '../../core/store/outbound.js';
import { isMessageSend, pausedDetail, refusalOf } from '../../core/send-pause.js';
import type { Table } from '../../core/store/table.js';
import { buildOutgoingMediaContent, releaseOutgoingMediaContent } from '../media/outgoing.js';
import type { Ownership } from '../ownership/ownership.js';
import type { InboundHandlers } from '../session/event-dispatcher.js';
import type { SendHandle } from '../session/send-handle.js';
import type { SessionRegistry } from '../session/session-registry.js';
import { connectedHandle, reasonOf, runLiveCommand } from './live-commands.js';
import { done, type CommandOutcome } from './outcome.js';
import { dropUploadWhenSettled } from './settled-upload.js';
import type { SendPauses } from './send-pauses.js';

export interface SendDeps {
  table: Table;
  mediaStore: MediaStore;
  registry: SessionRegistry;
  ownership: Ownership;
  inbound: InboundHandlers;
  logger: Logger;
  /** How long a send waits for a reconnecting session before failing (the API waits too). */
  waitForConnectedMs: number;
  /** How long a send waits for WhatsApp's ack (SEND_ACK_WAIT_MS; 0: not at all). */
  ackWaitMs: number;
  /** The accounts' send pauses after WhatsApp's refusals (send-pauses.ts). */
  sendPauses: SendPauses;
  /** Told of each send claimed (about to be handed to WhatsApp): the pacer counts those (connector/pacing/). */
  onClaimed?: (messageId: string) => void;
}

/** A send that cannot be done; the message becomes the outbound `reason` (the API's `detail`). */
export class SendRejectedError extends Error {
  override name = 'SendRejectedError';
}

export type PreparedSend =
  | {
      jid: string;
      content: AnyMessageContent;
      options?: Omit<MiscMessageGenerationOptions, 'messageId'>;
      /** Called when the content was built but will not be sent (frees streams). */
      release?: () => void;
    }
  /** An action on the socket that sends no message (read receipts, presence, a media fetch): done when it resolves. */
  | { action: (sock: WASocket, handle: SendHandle) => Promise<void> };

/** The key of a stored message, as Baileys addresses it in quotes, reactions and deletes. */
export function keyOf(message: Message): WAMessageKey {
  return {
    remoteJid: message.chatId,
    fromMe: message.fromMe,
    id: message.messageId,
    ...(isGroupJid(message.chatId) && !message.fromMe ? { participant: message.from } : {}),
  };
}

/** Enough of a stored message for Baileys to build the quote (context info) of a reply. */
function quotable(message: Message): WAMessage {
  return {
    key: keyOf(message),
    message: { conversation: message.text ?? message.caption ?? '' },
  };
}

const LATE = 'not sent: the connector took the command after its deadline';
const STOPPED_MID_SEND = 'the connector stopped while sending; the message may have been delivered and is not sent again';

/**
 * The five sends. Each one: skip unless its outbound record is `pending` and before its deadline
 * (a late or redelivered command must not send), fail at once when the account cannot send,
 * build the content, claim the record (pending -> sending, conditional on the deadline, so the
 * API's timeout and this send exclude each other), send with the command's messageId (so the
 * network's id is ours), store the sent message through the inbound pipeline, and finish the
 * record the API is waiting on.
 *
 * A crash between the claim and `sent` leaves the record `sending`; the redelivered command marks
 * it `unknown` instead of sending again: at most once, never a duplicate.
 */
export function sendHandlers(deps: SendDeps) {
  const { table } = deps;
  const runSend = sendRunner(deps);
  async function storedTarget(accountId: string, messageId: string): Promise<Message | undefined> {
    return findMessage(table, accountId, messageId);
  }

  return {
    send_text: (command: CommandOf<'send_text'>) =>
      runSend(command, async () => ({ jid: command.payload.to, content: { text: command.payload.text } })),

    send_reply: (command: CommandOf<'send_reply'>) =>
      runSend(command, async () => {
        const { chatId, text, quotedMessageId } = command.payload;
        const quoted = await storedTarget(command.accountId, quotedMessageId);
        if (!quoted) throw new SendRejectedError('quoted message not found');
        return { jid: chatId, content: { text }, options: { quoted: quotable(quoted) } };
      }),

    send_reaction: (command: CommandOf<'send_reaction'>) =>
      runSend(command, async () => {
        const { to, targetMessageId, emoji } = command.payload;
        const target = await storedTarget(command.accountId, targetMessageId);
        const key: WAMessageKey = target ? keyOf(target) : { remoteJid: to, fromMe: false, id: targetMessageId };
        return { jid: key.remoteJid ?? to, content: { react: { text: emoji, key } } };
      }),

    delete_message: (command: CommandOf<'delete_message'>) =>
      runSend(command, async () => {
        const { to, targetMessageId } = command.payload;
        const target = await storedTarget(command.accountId, targetMessageId);
        if (target && !target.fromMe) throw new SendRejectedError('only messages sent by this account can be deleted');
        const key: WAMessageKey = target ? keyOf(target) : { remoteJid: to, fromMe: true, id: targetMessageId };
        return { jid: key.remoteJid ?? to, content: { delete: key } };
      }),

    send_media: (command: CommandOf<'send_media'>) =>
      dropUploadWhenSettled(
        deps,
        command.accountId,
        command.payload.s3Key,
        runSend(command, async () => {
          const { to: jid, kind, s3Key, mimetype, fileName, caption, ptt } = command.payload;
          if (!s3Key.startsWith(accountObjectPrefix(command.accountId))) throw new SendRejectedError("upload is not this account's");
          const upload = await getStream(deps.mediaStore, s3Key);
          if (!upload) throw new SendRejectedError('uploaded file not found');
          const content = await buildOutgoingMediaContent({
            kind,
            source: upload.body,
            mimetype,
            ...(fileName ? { fileName } : {}),
            ...(caption ? { caption } : {}),
            ...(ptt !== undefined ? { ptt } : {}),
          });
          return { jid, content, release: () => releaseOutgoingMediaContent(content) };
        }),
      ),
  };
}

const SEND_COMMAND = {
  records: outboundRecords,
  noRecord: 'no send record; not sent',
  late: LATE,
  failedLog: 'send failed',
  notClaimed: 'not claimed; not sent',
  notClaimedLog: 'not claimed (the API gave up on it or its deadline passed); not sent',
};

/** `runSend(command, prepare)`: the path every send command takes (see sendHandlers). */
export function sendRunner(deps: SendDeps) {
  const { table } = deps;

  return function runSend(command: SendCommand, prepare: () => Promise<PreparedSend>): Promise<CommandOutcome> {
    const { accountId } = command;
    const { messageId } = command.payload;
    const log = deps.logger.child({ accountId, messageId, command: command.type });

    return runLiveCommand({ table, log, accountId, id: messageId }, SEND_COMMAND, {
      redelivered: async () => {
        const resolved = await deps.inbound.resolveInterruptedSend(accountId, messageId, STOPPED_MID_SEND);
        log.warn({ resolved }, 'command redelivered while its send was in progress; not sent again');
        return done(resolved === 'sent' ? 'sent (its receipt came); not sent again' : 'outcome unknown; not sent again');
      },
      prepare: async ({ record, fail }) => {
        const handle = await connectedHandle(deps, accountId, () => Math.min(record.deadline, Date.now() + deps.waitForConnectedMs), fail);
        if (!('ready' in handle)) return handle;
        // A command queued before the pause, or past the API's eventually consistent read of it.
        // Checked once the session is here: its start loaded the stored pause (session-registry.ts).
        const pause = isMessageSend(command.type) ? deps.sendPauses.active(accountId) : undefined;
        if (pause) {
          const reason = pausedDetail(pause.reason);
          log.info({ reason }, 'send refused: sending paused');
          await failPendingOutboundPaused(table, accountId, messageId, reason, pause.until);
          return done(`refused: ${reason}`);
        }
        try {
          return { ready: { handle: handle.ready, prepared: await prepare() } };
        } catch (error) {
          return fail(reasonOf(error));
        }
      },
      discard: ({ prepared }) => {
        if ('release' in prepared) prepared.release?.();
      },
      run: (claimed) => {
        deps.onClaimed?.(messageId);
        return sendClaimed(deps, log, command, claimed);
      },
    });
  };
}

/** After the claim: send (or act), store what was sent, and finish the record. */
async function sendClaimed(
  deps: SendDeps,
  log: Logger,
  command: SendCommand,
  { handle, prepared }: { handle: SendHandle; prepared: PreparedSend },
): Promise<CommandOutcome> {
  const { table } = deps;
  const { accountId } = command;
  const { messageId } = command.payload;
  const failClaimed = async (reason: string) => {
    log.warn({ reason }, 'send failed');
    await markOutboundFailed(table, accountId, messageId, reason);
    return done(`failed: ${reason}`);
  };
  if ('action' in prepared) {
    try {
      await prepared.action(handle.sock, handle);
    } catch (error) {
      return failClaimed(reasonOf(error));
    }
    await markOutboundSent(table, accountId, messageId, Date.now());
    log.info('done');
    return done('done');
  }
  let sent: WAMessage | undefined;
  handle.noteOwnSend(messageId);
  const handedAt = Date.now();
  // A refusal after the wait: the send answered already (200), but the account pauses all the same.
  const onLateNack = (error: string) => {
    const refusal = refusalOf(error);
    log.warn({ reason: refusal.detail }, 'WhatsApp refused the send after the ack wait; it was answered as sent');
    if (refusal.pause) {
      deps.sendPauses.refused(accountId, refusal.pause, handedAt).catch((err: unknown) => log.error({ err }, 'pausing the account failed'));
    }
  };
  // Before the stanza goes: WhatsApp's ack may be read before sendMessage resolves.
  const ack = deps.ackWaitMs > 0 ? handle.expectServerAck(messageId, deps.ackWaitMs, onLateNack) : undefined;
  try {
    sent = await handle.sock.sendMessage(prepared.jid, prepared.content, { ...prepared.options, messageId });
  } catch (error) {
    ack?.cancel();
    prepared.release?.();
    return failClaimed(reasonOf(error));
  }
  if (!sent) {
    ack?.cancel();
    return failClaimed('the network did not accept the message');
  }
  // Stored before `sent` is recorded, so that a client reading right after its 200 finds it;
  // stored while WhatsApp's ack is awaited, so that the wait adds only what the ack takes longer.
  const ctx = handle.storeContext;
  const stored = ctx
    ? deps.inbound
        .handleUpsert(accountId, { messages: [sent], type: 'append' }, ctx)
        .catch((error: unknown) => log.error({ err: error }, 'storing the sent message failed'))
    : undefined;
  // WhatsApp's verdict (server-acks.ts). No ack within the wait: answered as the stanza went out,
  // `sent`, as before the wait existed; the message's status still follows later receipts.
  const writtenAt = Date.now();
  const verdict = ack ? await ack.result : undefined;
  // The ack's round trip after the stanza was written (bench/ack-wait.ts reads it from the log).
  const waited = ack ? { ackWaitedMs: Date.now() - writtenAt } : {};
  await stored;
  if (verdict?.kind === 'none') log.info({ waitedMs: deps.ackWaitMs }, 'no ack from WhatsApp within the wait; answered as sent');
  const refusal = verdict?.kind === 'nack' ? refusalOf(verdict.error) : undefined;
  if (refusal) {
    // Stored all the same: Baileys' `messages.update` (status ERROR) makes its row `failed`.
    if (refusal.pause) await deps.sendPauses.refused(accountId, refusal.pause, handedAt);
    return failClaimed(refusal.detail);
  }
  const seconds = Number(sent.messageTimestamp ?? 0);
  await markOutboundSent(table, accountId, messageId, seconds > 0 ? seconds * 1000 : Date.now(), handle.contentToKeep(sent));
  // sendMs: from handing the message to Baileys to the outcome recorded (bench/ack-wait.ts compares it).
  log.info({ ...waited, sendMs: Date.now() - handedAt }, 'sent');
  return done('sent');
}
