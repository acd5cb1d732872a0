import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { outboundKey } from '../keys.js';
import { outboundSchema, type Outbound } from '../schemas/outbound.js';
import { updateStatus } from './deadline-claim.js';
import { liveRequestRecords } from './live-requests.js';
import type { Table } from './table.js';

/**
 * One send's lifecycle. Who may move it where is what makes a send happen at most once and only
 * within its API call:
 *
 *   pending ──claim (connector, only before the deadline)──► sending ──► sent | failed
 *      │                                                          └──(redelivered after a crash)──► unknown
 *      └──failPending (API at its deadline or on abort; connector when it cannot send)──► failed
 *
 * The claim and failPending are both conditional on `pending`, so exactly one of them wins: a
 * send the API gave up on is never claimed, and a claimed send is never failed by the API.
 */

const OUTBOUND_TTL_SECONDS = 24 * 60 * 60;

/**
 * The live-request records (live-requests.ts), with a send's extra state: `unknown`, a claimed send
 * whose outcome was lost; still finished by sent or failed.
 */
export const outboundRecords = liveRequestRecords<Outbound, { messageId: string; commandId: string }>({
  key: outboundKey,
  idOf: (ids) => ids.messageId,
  schema: outboundSchema,
  claimed: 'sending',
  // Claimed by a connector; `unknown` too, since the claimer may still report after all.
  finishFrom: ['sending', 'unknown'],
  // Only a send's schema has `claimedAt`.
  stampClaimedAt: true,
  // Outbound records are only needed while a send is in flight and shortly after.
  ttlSeconds: OUTBOUND_TTL_SECONDS,
});

/** Written by the function before the command is enqueued. */
export function putPendingOutbound(
  table: Table,
  accountId: string,
  ids: { messageId: string; commandId: string },
  deadline: number,
  now = Date.now(),
): Promise<Outbound> {
  return outboundRecords.putPending(table, accountId, ids, deadline, now);
}

/**
 * A paced send's record (docs/sending.md#paced-sends), written by the function before its ticket
 * is taken: `pending` like any send, with its `notBefore`, and `async` when nobody waits for it.
 * An async send's deadline is far (it waits its turn); its record lives a day past it.
 */
export async function putQueuedOutbound(
  table: Table,
  accountId: string,
  record: { messageId: string; commandId: string; deadline: number; notBefore: number; async: boolean },
  now = Date.now(),
): Promise<void> {
  const ttlFrom = Math.max(now, record.async ? record.deadline : now);
  const item: Outbound = { ...record, status: 'pending', expiresAt: Math.floor(ttlFrom / 1000) + OUTBOUND_TTL_SECONDS };
  await table.doc.send(new PutCommand({ TableName: table.name, Item: { ...outboundKey(accountId, record.messageId), ...item } }));
}

export function findOutbound(table: Table, accountId: string, messageId: string, consistent = true): Promise<Outbound | undefined> {
  return outboundRecords.find(table, accountId, messageId, consistent);
}

/**
 * Connector, right before handing the message to WhatsApp: pending -> sending, only while the
 * deadline has not passed. False: the API gave up on it, it is past its deadline, or another
 * delivery of the command took it; it must not be sent.
 */
export function claimOutbound(table: Table, accountId: string, messageId: string, now = Date.now()): Promise<boolean> {
  return outboundRecords.claim(table, accountId, messageId, now);
}

/**
 * pending -> failed: the API's deadline passed or its client went away, or the connector cannot
 * send it. False when it is no longer pending (claimed or finished: read it again).
 */
export function failPendingOutbound(table: Table, accountId: string, messageId: string, reason: string): Promise<boolean> {
  return outboundRecords.failPending(table, accountId, messageId, reason);
}

/**
 * pending -> failed, by the connector, because the account's sending is paused until `retryAt`
 * (Unix ms): the API answers it with `retryAfter` (core/send-pause.ts).
 */
export function failPendingOutboundPaused(table: Table, accountId: string, messageId: string, reason: string, retryAt: number) {
  return outboundRecords.failPending(table, accountId, messageId, reason, { retryAt });
}

/**
 * Connector, after its claim: the network accepted the message. Also over `unknown` (a second
 * delivery of the command gave up on this one while it was still being sent): the truth wins.
 * `content`: the message as sent (its encoded protobuf), kept with the record for as long as it
 * lives, so that a recipient's retry receipt finds it after a reconnect or on another connector
 * (`findSentContent`).
 */
export function markOutboundSent(table: Table, accountId: string, messageId: string, sentAt = Date.now(), content?: Uint8Array) {
  return outboundRecords.finishClaimed(table, accountId, messageId, 'sent', { sentAt, sentContent: content });
}

/** The encoded message a send recorded with `markOutboundSent`, while its record lives. */
export async function findSentContent(table: Table, accountId: string, messageId: string): Promise<Uint8Array | undefined> {
  const result = await table.doc.send(
    new GetCommand({ TableName: table.name, Key: outboundKey(accountId, messageId), ProjectionExpression: 'sentContent' }),
  );
  const content = result.Item?.sentContent;
  return content instanceof Uint8Array ? content : undefined;
}

/** Connector, after its claim: the network refused it; `reason` is shown to the client as `detail`. */
export function markOutboundFailed(table: Table, accountId: string, messageId: string, reason: string) {
  return outboundRecords.finishClaimed(table, accountId, messageId, 'failed', { reason });
}

/**
 * Connector, on a command redelivered while its send is still `sending`: the connector that
 * claimed it stopped before recording the outcome. It is not sent again (at most once).
 */
export function markOutboundUnknown(table: Table, accountId: string, messageId: string, reason: string) {
  return updateStatus(table, outboundKey(accountId, messageId), '#status = :unknown, reason = :reason', '#status = :sending', {
    ':sending': 'sending',
    ':unknown': 'unknown',
    ':reason': reason,
  });
}
