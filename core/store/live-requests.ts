import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { z } from 'zod';
import type { Key } from '../keys.js';
import { claimPending, failPending, updateStatus } from './deadline-claim.js';
import { withoutKeys, type Table } from './table.js';

/**
 * A live request: a record the API writes `pending` with a deadline, queues a command for, and
 * reads until the connector finishes it (a send, a pairing-code request, a group operation):
 *
 *   pending ──claim (connector, only before the deadline)──► <claimed> ──finishClaimed──► final
 *      └──failPending (API at its deadline; connector when it cannot do it)──► failed
 *
 * Both ways out of `pending` are conditional (deadline-claim.ts), so exactly one wins: a request
 * the API gave up on is never done, and one the connector took is finished by the connector.
 */

export interface LiveRecord {
  status: string;
  deadline: number;
  expiresAt: number;
}

export interface LiveRequestKind<R extends LiveRecord, Ids extends object> {
  /** The record's key, by the id `idOf` gives. */
  key: (accountId: string, id: string) => Key;
  idOf: (ids: Ids) => string;
  /** The record's schema; its fields are the ones read (a `z.object`). */
  schema: z.ZodType<R> & { shape: object };
  /** The status of a claimed record. */
  claimed: R['status'];
  /** The statuses finishClaimed moves on from; only `claimed` unless given. */
  finishFrom?: readonly R['status'][];
  /** `claimedAt` is stamped on the claim: only when the schema has it. */
  stampClaimedAt?: boolean;
  /** How long DynamoDB keeps the record (its TTL). */
  ttlSeconds: number;
}

export type LiveRequestRecords<R extends LiveRecord, Ids extends object> = ReturnType<typeof liveRequestRecords<R, Ids>>;

export function liveRequestRecords<R extends LiveRecord, Ids extends object>(kind: LiveRequestKind<R, Ids>) {
  const { key, schema, claimed } = kind;
  // The record's own fields: a sent message's `sentContent` (up to 64 KB) is read only for a retry.
  const fieldNames = Object.fromEntries(Object.keys(schema.shape).map((field) => [`#${field}`, field]));
  const finishFrom = kind.finishFrom ?? [claimed];
  const fromClaimed = `#status IN (${finishFrom.map((_, i) => `:from${i}`).join(', ')})`;
  const fromValues = Object.fromEntries(finishFrom.map((status, i) => [`:from${i}`, status]));

  return {
    claimedStatus: claimed,

    /** Written by the function before the command is queued. */
    async putPending(table: Table, accountId: string, ids: Ids, deadline: number, now = Date.now()): Promise<R> {
      const record = { ...ids, status: 'pending', deadline, expiresAt: Math.floor(now / 1000) + kind.ttlSeconds } as unknown as R;
      await table.doc.send(new PutCommand({ TableName: table.name, Item: { ...key(accountId, kind.idOf(ids)), ...record } }));
      return record;
    },

    async find(table: Table, accountId: string, id: string, consistent = true): Promise<R | undefined> {
      const result = await table.doc.send(
        new GetCommand({
          TableName: table.name,
          Key: key(accountId, id),
          ConsistentRead: consistent,
          ProjectionExpression: Object.keys(fieldNames).join(', '),
          ExpressionAttributeNames: fieldNames,
        }),
      );
      return result.Item ? schema.parse(withoutKeys(result.Item)) : undefined;
    },

    /** Connector, right before doing it: pending -> claimed, only before the deadline. */
    claim(table: Table, accountId: string, id: string, now = Date.now()): Promise<boolean> {
      return claimPending(table, key(accountId, id), claimed, now, { stampClaimedAt: kind.stampClaimedAt ?? false });
    },

    /** pending -> failed: the API gave up on it, or the connector cannot do it. False when no longer pending. */
    failPending(table: Table, accountId: string, id: string, reason: string, fields?: Record<string, unknown>): Promise<boolean> {
      return failPending(table, key(accountId, id), reason, fields);
    },

    /** Connector, after its claim: the final `status` and the `fields` that go with it. False when not claimed. */
    finishClaimed(
      table: Table,
      accountId: string,
      id: string,
      status: R['status'],
      fields: Record<string, unknown> = {},
    ): Promise<boolean> {
      const given = Object.entries(fields).filter(([, value]) => value !== undefined);
      const set = ['#status = :status', ...given.map(([field]) => `#${field} = :${field}`)].join(', ');
      const names = Object.fromEntries(given.map(([field]) => [`#${field}`, field]));
      const values = { ...fromValues, ':status': status, ...Object.fromEntries(given.map(([field, value]) => [`:${field}`, value])) };
      return updateStatus(table, key(accountId, id), set, fromClaimed, values, names);
    },
  };
}

/** Only needed while the API waits for it. */
const COMMAND_REQUEST_TTL_SECONDS = 60 * 60;

/** The records of a live request keyed by the id of the command that carries it (not a send). */
export function commandRequestRecords<R extends LiveRecord>(
  key: LiveRequestKind<R, never>['key'],
  schema: LiveRequestKind<R, never>['schema'],
  claimed: R['status'],
) {
  return liveRequestRecords<R, { commandId: string }>({
    key,
    idOf: (ids) => ids.commandId,
    schema,
    claimed,
    ttlSeconds: COMMAND_REQUEST_TTL_SECONDS,
  });
}
