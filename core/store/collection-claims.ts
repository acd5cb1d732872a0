import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { CLAIMS_BACKFILLED_KEY, collectionClaimKey } from '../keys.js';
import { defaultCollectionName } from '../jid.js';
import { ITEM_ABSENT, writeIfCondition, type Table } from './table.js';

/**
 * A `collectionName` names the auth state (the WhatsApp session) an account connects with. One
 * claim item per name says which account holds it: an account connects only with, and deletes
 * only, the auth state of a name it holds.
 *
 * Claims are plain conditional writes, not a transaction with the account item, because the
 * local DynamoDB emulator (dynalite) has no TransactWriteItems. The account is written first
 * (its id decides `Account already exists`), then the claim; losing the claim deletes the
 * account just written. So of two concurrent creates naming one collection exactly one keeps
 * it, whatever the interleaving:
 *
 *   A: put account a ─ put claim (a) ✓
 *   B:    put account b ─────────────── put claim (b) ✗ (held by a) ─ delete account b ─ 409
 */
const FREE_OR_HELD_BY = 'attribute_not_exists(pk) OR accountId = :accountId';
const HELD_BY = 'accountId = :accountId';

/**
 * Claims `collectionName` for `accountId`: true when it is now (or already was) theirs, false
 * when another account holds it.
 */
export async function claimCollection(table: Table, collectionName: string, accountId: string, now = Date.now()): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(
      new PutCommand({
        TableName: table.name,
        Item: { ...collectionClaimKey(collectionName), collectionName, accountId, claimedAt: now },
        ConditionExpression: FREE_OR_HELD_BY,
        ExpressionAttributeValues: { ':accountId': accountId },
      }),
    ),
  );
}

/** The account holding `collectionName`, or undefined when nobody does. */
export async function collectionHolder(table: Table, collectionName: string): Promise<string | undefined> {
  const result = await table.doc.send(
    new GetCommand({ TableName: table.name, Key: collectionClaimKey(collectionName), ConsistentRead: true }),
  );
  const holder = result.Item?.accountId;
  return typeof holder === 'string' ? holder : undefined;
}

/** Gives `collectionName` up, only if `accountId` holds it (a no-op otherwise). */
export async function releaseCollection(table: Table, collectionName: string, accountId: string): Promise<void> {
  await writeIfCondition(
    table.doc.send(
      new DeleteCommand({
        TableName: table.name,
        Key: collectionClaimKey(collectionName),
        ConditionExpression: HELD_BY,
        ExpressionAttributeValues: { ':accountId': accountId },
      }),
    ),
  );
}

export interface ClaimableAccount {
  _id: string;
  collectionName: string;
}

/**
 * Accounts created before claims existed have none. They get theirs once, the first time a
 * claim matters after an upgrade (an account is created or deleted, a session starts). Where
 * two old accounts share a collection, the one whose default name it is (`auth_<id>`) wins,
 * else the oldest: the other keeps its record but neither connects with nor deletes that
 * session. Idempotent and safe to run concurrently (every claim is conditional).
 *
 * `listAccounts` is passed in (rather than imported) so that this module does not depend on
 * the accounts repository, which depends on it.
 */
export async function backfillCollectionClaims(
  table: Table,
  listAccounts: () => Promise<ClaimableAccount[]>,
): Promise<{ claimed: number; contested: string[] }> {
  const done = await table.doc.send(new GetCommand({ TableName: table.name, Key: CLAIMS_BACKFILLED_KEY, ConsistentRead: true }));
  if (done.Item) return { claimed: 0, contested: [] };
  const accounts = await listAccounts();
  const ownsDefault = (a: ClaimableAccount) => a.collectionName === defaultCollectionName(a._id);
  // Oldest first within each group: listAccounts answers in creation order.
  const ordered = [...accounts.filter(ownsDefault), ...accounts.filter((a) => !ownsDefault(a))];
  let claimed = 0;
  const contested: string[] = [];
  for (const account of ordered) {
    if (await claimCollection(table, account.collectionName, account._id)) claimed += 1;
    else contested.push(account._id);
  }
  // Conditional so that of two processes backfilling at once one writes it; both are done.
  await writeIfCondition(
    table.doc.send(
      new PutCommand({ TableName: table.name, Item: { ...CLAIMS_BACKFILLED_KEY, at: Date.now() }, ConditionExpression: ITEM_ABSENT }),
    ),
  );
  return { claimed, contested };
}
