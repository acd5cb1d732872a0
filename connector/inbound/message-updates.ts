import type { LazyLog } from '../../core/lazy-child.js';
import type { Message } from '../../core/schemas/message.js';
import type { WebhookEvent } from '../../core/schemas/webhook-event.js';
import { findPollSecret } from '../../core/store/poll-secrets.js';
import { editMessageContent, findMessageRecord, markMessageRevoked, setPollVotes, setReactions } from '../../core/store/messages.js';
import type { Table } from '../../core/store/table.js';
import type { EventOutbox } from './event-outbox.js';
import type { EventPublisher } from './event-publisher.js';
import type { InboundAction, PollVote, UpdateOrigin } from './map-message.js';
import type { InboundContext } from './pipeline.js';
import { decryptVote, pollVoteEvent, withVote } from './poll-votes.js';
import { applyReaction } from './reactions.js';

/**
 * Messages that change a stored message instead of adding one: reactions, revokes ("deleted for
 * everyone"), edits and poll votes. Each rewrites its target's row (keeping its marks), then
 * queues its webhook event when it is due. Something durable holds that event from before the
 * row write until it is enqueued: the update's write-ahead record when it has one (a replay
 * applies the update again and enqueues the event again, same id), otherwise an item of the
 * event outbox (event-outbox.ts).
 */

/** A message that updates a stored one. */
export type MessageUpdate = Extract<InboundAction, { kind: 'reaction' | 'revoke' | 'edit' | 'poll_vote' }>;

export interface MessageUpdatesDeps {
  table: Table;
  events: EventPublisher;
  outbox: EventOutbox;
  /** Also deliver what the account did itself to webhooks. */
  deliverFromMe: boolean;
}

export function messageUpdatesOf({ table, events, outbox, deliverFromMe }: MessageUpdatesDeps) {
  /** Events of what the account did itself go out only when its own messages do. */
  const updateEventDue = (origin: UpdateOrigin) => !origin.fromMe || deliverFromMe;

  /**
   * The stored message an update points at, when it is in the chat the update came from: an
   * update naming a message id of another chat changes nothing. Its marks come along so that
   * rewriting the row keeps them.
   */
  async function updateTarget(accountId: string, update: { kind: string; chatId: string; targetMessageId: string }, log: LazyLog) {
    const target = await findMessageRecord(table, accountId, update.targetMessageId);
    if (!target || target.message.chatId !== update.chatId) {
      log.debug(
        { targetMessageId: update.targetMessageId, update: update.kind, stored: Boolean(target) },
        'update of a message not stored in this chat',
      );
      return undefined;
    }
    return target;
  }

  /**
   * The event of a reaction, revoke or edit: its eventId is that of the update message (a
   * revoke: of its target, which is revoked once), stable across redeliveries.
   */
  function updateEvent(
    accountId: string,
    origin: UpdateOrigin,
    event: 'message.reaction' | 'message.revoked' | 'message.edited',
    suffix: string,
    body: Record<string, unknown>,
  ): WebhookEvent {
    const id = event === 'message.revoked' ? String(body.messageId) : origin.updateId;
    return { eventId: `${accountId}:${id}:${suffix}`, accountId, event, body, createdAt: Date.now() };
  }

  /**
   * Writes an update's row change, then enqueues its event (undefined: none is due). Without a
   * write-ahead record of the update, an outbox item holds the event across the two.
   */
  async function writeThenSend(
    accountId: string,
    updateMessageId: string,
    ctx: InboundContext,
    event: WebhookEvent | undefined,
    write: () => Promise<boolean>,
  ) {
    const writeAhead = ctx.writeAhead?.(updateMessageId);
    const held = event && !writeAhead ? await outbox.hold(accountId, { events: [event] }) : undefined;
    let handOff: Promise<void> | undefined;
    try {
      if ((await write()) && event) handOff = events.publish(event);
      // A live record holds the event until the hand-off: the handling need not wait for the webhook.
      if (handOff && writeAhead === 'live' && ctx.heldUntil) ctx.heldUntil(updateMessageId, handOff);
      else if (handOff && held) outbox.doneWhen(held, handOff);
      else await handOff;
    } catch (error) {
      if (held) outbox.failed(held);
      throw error;
    }
    if (held && !handOff) outbox.done(held);
  }

  function baseUpdateBody(target: Message, origin: UpdateOrigin) {
    return { messageId: target.messageId, chatId: origin.chatId, from: origin.from, timestamp: origin.timestamp };
  }

  /** Decrypts a vote with its poll's secret, keeps it on the poll, and queues `message.poll_vote` when it is due. */
  async function storePollVote(accountId: string, voteMessageId: string, vote: PollVote, ctx: InboundContext, log: LazyLog) {
    const poll = await updateTarget(accountId, { kind: 'poll_vote', chatId: vote.chatId, targetMessageId: vote.pollMessageId }, log);
    const secret = poll ? await findPollSecret(table, accountId, vote.pollMessageId) : undefined;
    if (!poll || !secret) {
      log.debug({ pollMessageId: vote.pollMessageId }, 'vote for a poll whose secret is not stored');
      return;
    }
    const selected = decryptVote(vote, poll.message, secret, ctx.selfJid);
    if (!selected) {
      log.warn({ pollMessageId: vote.pollMessageId }, 'poll vote could not be decrypted');
      return;
    }
    const updated = withVote(poll.message, vote.from, selected, vote.timestamp);
    // The account's own vote is posted only with WEBHOOK_INCLUDE_FROM_ME, as its reactions and edits are.
    const event = !vote.fromMe || deliverFromMe ? pollVoteEvent(accountId, voteMessageId, vote, selected) : undefined;
    await writeThenSend(accountId, voteMessageId, ctx, event, () =>
      setPollVotes(table, accountId, poll.message.messageId, updated.pollVotes),
    );
  }

  /** Applies an update (`updateMessageId`: the id of the message that carries it) to its target. */
  async function applyUpdate(accountId: string, updateMessageId: string, action: MessageUpdate, ctx: InboundContext, log: LazyLog) {
    switch (action.kind) {
      case 'reaction': {
        const target = await updateTarget(accountId, action, log);
        if (!target) return;
        const { messageId, reactions } = target.message;
        const { from, emoji, timestamp } = action.reaction;
        const event = updateEventDue(action)
          ? updateEvent(accountId, action, 'message.reaction', 'reaction', { messageId, chatId: action.chatId, from, emoji, timestamp })
          : undefined;
        await writeThenSend(accountId, updateMessageId, ctx, event, () =>
          setReactions(table, accountId, messageId, applyReaction(reactions, action.reaction)),
        );
        return;
      }
      case 'revoke': {
        const target = await updateTarget(accountId, action, log);
        if (!target) return;
        const event = updateEventDue(action)
          ? updateEvent(accountId, action, 'message.revoked', 'revoked', baseUpdateBody(target.message, action))
          : undefined;
        await writeThenSend(accountId, updateMessageId, ctx, event, () => markMessageRevoked(table, accountId, target.message.messageId));
        return;
      }
      case 'edit': {
        const target = await updateTarget(accountId, action, log);
        if (!target || target.message.revoked) return;
        const { message } = target;
        const text = action.text !== undefined && message.text !== undefined ? action.text : undefined;
        const caption = action.caption !== undefined && message.hasMedia ? action.caption : undefined;
        if (text === undefined && caption === undefined) return;
        const content = { ...(text !== undefined ? { text } : {}), ...(caption !== undefined ? { caption } : {}) };
        const event = updateEventDue(action)
          ? updateEvent(accountId, action, 'message.edited', 'edited', { ...baseUpdateBody(message, action), text: text ?? caption })
          : undefined;
        await writeThenSend(accountId, updateMessageId, ctx, event, () => editMessageContent(table, accountId, message.messageId, content));
        return;
      }
      case 'poll_vote':
        await storePollVote(accountId, updateMessageId, action, ctx, log);
        return;
    }
  }

  return { applyUpdate };
}
