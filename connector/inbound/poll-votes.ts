import { createHash } from 'node:crypto';
import { decryptPollVote, jidNormalizedUser } from '@whiskeysockets/baileys';
import type { Message } from '../../core/schemas/message.js';
import type { WebhookEvent } from '../../core/schemas/webhook-event.js';
import type { PollVote } from './map-message.js';

/**
 * Poll votes. A voter's device encrypts its choice (AES-GCM) with a key derived from the poll's
 * `messageSecret`, the poll's id, the poll creator's JID and its own JID, and names each chosen
 * option by the SHA-256 of its text. Which JIDs it used (phone number or LID) depends on how the
 * chat is addressed, so each known pair is tried: a wrong one fails the GCM check.
 */

/** The chosen options' texts, or undefined when no JID pair decrypts the vote. */
export function decryptVote(vote: PollVote, poll: Message, secret: Uint8Array, selfJid: string): string[] | undefined {
  const creators = [
    ...new Set([poll.from, poll.fromMe ? selfJid : undefined].filter((jid): jid is string => Boolean(jid)).map(jidNormalizedUser)),
  ];
  for (const pollCreatorJid of creators) {
    for (const voterJid of vote.voterJids) {
      let hashes: Uint8Array[];
      try {
        hashes = decryptPollVote(
          { encPayload: vote.encPayload, encIv: vote.encIv },
          { pollCreatorJid, pollMsgId: poll.messageId, pollEncKey: secret, voterJid },
        ).selectedOptions;
      } catch {
        continue;
      }
      const byHash = new Map((poll.pollOptions ?? []).map((option) => [sha256Hex(option), option]));
      return hashes.map((hash) => byHash.get(Buffer.from(hash).toString('hex'))).filter((option): option is string => option !== undefined);
    }
  }
  return undefined;
}

/** The poll with the voter's choice replacing any earlier one (an empty choice takes the vote back). */
export function withVote(poll: Message, from: string, selected: string[], timestamp: number): Message {
  const others = (poll.pollVotes ?? []).filter((vote) => vote.from !== from);
  const pollVotes = selected.length > 0 ? [...others, { from, selected, timestamp }] : others;
  const { pollVotes: _previous, ...rest } = poll;
  return pollVotes.length > 0 ? { ...rest, pollVotes } : rest;
}

/** The `message.poll_vote` webhook event (docs/webhooks.md); one per vote message. */
export function pollVoteEvent(accountId: string, voteMessageId: string, vote: PollVote, selected: string[]): WebhookEvent {
  return {
    eventId: `${accountId}:${voteMessageId}`,
    accountId,
    event: 'message.poll_vote',
    body: { messageId: vote.pollMessageId, chatId: vote.chatId, from: vote.from, selected, timestamp: vote.timestamp },
    createdAt: Date.now(),
  };
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
