import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AlreadyExistsError, ConflictError, NotFoundError, isConditionalCheckFailed } from '../errors.js';
import { ACCOUNTS_GSI1PK, accountGsi1, accountKey } from '../keys.js';
import { accountSchema, accountViewSchema, type Account, type AccountStatusChange, type AccountView } from '../schemas/account.js';
import type { AccountSettings } from '../schemas/settings.js';
import type { StoredSendPause } from '../send-pause.js';
import { backfillCollectionClaims, claimCollection, collectionHolder } from './collection-claims.js';
import { ALL, gsi1CursorPage, queryGsi1 } from './paging.js';
import { ITEM_ABSENT, ITEM_EXISTS, writeIfCondition, type Table } from './table.js';

export interface NewAccount {
  id: string;
  name?: string;
  collectionName: string;
  status: Account['status'];
  /** Stored with the account (core/schemas/settings.ts), at settings version 1. */
  settings?: AccountSettings;
}

/**
 * The schema is a plain z.object, which leaves out the key attributes (pk, sk, gsi1pk, gsi1sk)
 * with every other unknown one: copying the item without them first doubled the cost of a page.
 */
const parseAccount = (item: Record<string, unknown>) => accountSchema.parse(item);

/**
 * Stores a new account holding its `collectionName` (see collection-claims.ts):
 * AlreadyExistsError(`Account already exists`) when the id is taken, ConflictError(`collectionName
 * already in use`) when another account holds the collection.
 */
export async function createAccount(table: Table, input: NewAccount, now = new Date()): Promise<Account> {
  await ensureCollectionClaims(table);
  const createdAt = now.toISOString();
  const account: Account = {
    _id: input.id,
    ...(input.name !== undefined ? { name: input.name } : {}),
    collectionName: input.collectionName,
    status: input.status,
    currentStatus: input.status,
    hasQR: false,
    createdAt,
    lastUpdate: createdAt,
    ...(input.settings ? { settings: input.settings, settingsVersion: 1 } : {}),
  };
  try {
    await table.doc.send(
      new PutCommand({
        TableName: table.name,
        Item: { ...accountKey(input.id), ...accountGsi1(input.id, createdAt), ...account },
        ConditionExpression: ITEM_ABSENT,
      }),
    );
  } catch (error) {
    if (isConditionalCheckFailed(error)) throw new AlreadyExistsError('Account already exists', { cause: error });
    throw error;
  }
  if (!(await claimCollection(table, input.collectionName, input.id, now.getTime()))) {
    await deleteAccountRecord(table, input.id);
    throw new ConflictError('collectionName already in use');
  }
  return account;
}

/**
 * True when the account may connect with its `collectionName`: it holds the claim, or the name
 * is free and it claims it now. False when another account holds it.
 */
export async function holdsItsCollection(table: Table, account: Pick<Account, '_id' | 'collectionName'>): Promise<boolean> {
  await ensureCollectionClaims(table);
  const holder = await collectionHolder(table, account.collectionName);
  if (holder !== undefined) return holder === account._id;
  return claimCollection(table, account.collectionName, account._id);
}

/** Gives accounts created before collection claims existed their claim (once per table). */
export async function ensureCollectionClaims(table: Table): Promise<void> {
  await backfillCollectionClaims(table, () => listAccounts(table));
}

export async function findAccount(table: Table, accountId: string, consistent = false): Promise<Account | undefined> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: accountKey(accountId), ConsistentRead: consistent }));
  return result.Item ? parseAccount(result.Item) : undefined;
}

/** The account, or NotFoundError(`Account not found`). */
export async function getAccount(table: Table, accountId: string, consistent = false): Promise<Account> {
  const account = await findAccount(table, accountId, consistent);
  if (!account) throw new NotFoundError('Account not found');
  return account;
}

/** Every account, oldest first. */
export async function listAccounts(table: Table): Promise<Account[]> {
  const items = await queryGsi1(table, ACCOUNTS_GSI1PK, ALL, 'oldest_first');
  return items.map(parseAccount);
}

/** Every account as the API lists it (accountViewSchema), oldest first: the same Query as listAccounts. */
export async function listAccountViews(table: Table): Promise<AccountView[]> {
  const items = await queryGsi1(table, ACCOUNTS_GSI1PK, ALL, 'oldest_first');
  return items.map((item) => accountViewSchema.parse(item));
}

/** One page of the accounts as the API lists them, oldest first, and the cursor of the next. */
export async function listAccountViewsPage(
  table: Table,
  page: { limit: number; cursor?: string | undefined },
): Promise<{ accounts: AccountView[]; nextCursor?: string }> {
  const { items, nextCursor } = await gsi1CursorPage(table, ACCOUNTS_GSI1PK, page, 'oldest_first');
  const accounts = items.map((item) => accountViewSchema.parse(item));
  return nextCursor === undefined ? { accounts } : { accounts, nextCursor };
}

/**
 * Records a status change (both `status` and `currentStatus`, plus `hasQR` when given, and
 * `lastDisconnect` when the change is a disconnect). Never recreates a deleted account:
 * NotFoundError when it is gone.
 */
export async function updateAccountStatus(table: Table, accountId: string, change: AccountStatusChange, now = new Date()): Promise<void> {
  const hasQR = change.hasQR ?? false;
  try {
    await table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: accountKey(accountId),
        UpdateExpression: `SET #status = :status, currentStatus = :status, hasQR = :hasQR, lastUpdate = :now${change.lastDisconnect ? ', lastDisconnect = :lastDisconnect' : ''}`,
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':status': change.status,
          ':hasQR': hasQR,
          ':now': now.toISOString(),
          ...(change.lastDisconnect ? { ':lastDisconnect': change.lastDisconnect } : {}),
        },
      }),
    );
  } catch (error) {
    if (isConditionalCheckFailed(error)) throw new NotFoundError('Account not found', { cause: error });
    throw error;
  }
}

/**
 * The connector, after WhatsApp refused a send (core/send-pause.ts): the account's pause, which
 * the API reads with the account on every send and shows while it lasts. Not `lastUpdate`: that
 * is the status's time. NotFoundError when the account is gone.
 */
export async function writeSendPause(table: Table, accountId: string, pause: StoredSendPause): Promise<void> {
  try {
    await table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: accountKey(accountId),
        UpdateExpression: 'SET sendPause = :pause',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeValues: { ':pause': pause },
      }),
    );
  } catch (error) {
    if (isConditionalCheckFailed(error)) throw new NotFoundError('Account not found', { cause: error });
    throw error;
  }
}

/**
 * When the account's device was linked (a QR scanned, a pairing code entered): the warm-up of
 * paced sends counts days from it (core/pacing/limits.ts). Written by the connector at the link.
 */
export async function writeLinkedAt(table: Table, accountId: string, linkedAt: number): Promise<void> {
  await writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: accountKey(accountId),
        UpdateExpression: 'SET linkedAt = :at',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeValues: { ':at': linkedAt },
      }),
    ),
  );
}

/** Removes only the account record (see account-deletion.ts for everything else). */
export async function deleteAccountRecord(table: Table, accountId: string): Promise<void> {
  await table.doc.send(new DeleteCommand({ TableName: table.name, Key: accountKey(accountId) }));
}
