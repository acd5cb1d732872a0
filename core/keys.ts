/**
 * Every DynamoDB key of the single table, in one place. Items live under their account's
 * partition so that deleting an account is one Query plus batch deletes; the `gsi1` index serves
 * the ordered lists (accounts by creation, chats and messages newest first).
 */
export const GSI1 = 'gsi1';

export interface Key {
  pk: string;
  sk: string;
}

/** A key (or a stored item's key attributes) as one string, to find items by key in a Map or Set. */
export const keyText = (key: { pk?: unknown; sk?: unknown }) => `${String(key.pk)}\u0000${String(key.sk)}`;

export interface Gsi1Key {
  gsi1pk: string;
  gsi1sk: string;
}

const TIME_DIGITS = 15;
/** Zero-padded so that string order equals numeric order for Unix milliseconds. */
function sortableTime(ms: number): string {
  return Math.max(0, Math.trunc(ms)).toString().padStart(TIME_DIGITS, '0');
}

export const accountPartition = (accountId: string) => `ACCOUNT#${accountId}`;

export const accountKey = (accountId: string): Key => ({ pk: accountPartition(accountId), sk: 'ACCOUNT' });
export const ACCOUNTS_GSI1PK = 'ACCOUNTS';
export const accountGsi1 = (accountId: string, createdAt: string): Gsi1Key => ({
  gsi1pk: ACCOUNTS_GSI1PK,
  gsi1sk: `${createdAt}#${accountId}`,
});

export const chatKey = (accountId: string, chatId: string): Key => ({
  pk: accountPartition(accountId),
  sk: `CHAT#${chatId}`,
});
export const chatsGsi1pk = (accountId: string) => `CHATS#${accountId}`;
export const chatGsi1 = (accountId: string, chatId: string, lastMessageTime: number): Gsi1Key => ({
  gsi1pk: chatsGsi1pk(accountId),
  gsi1sk: `${sortableTime(lastMessageTime)}#${chatId}`,
});

export const MESSAGE_SK_PREFIX = 'MSG#';
export const messageKey = (accountId: string, messageId: string): Key => ({
  pk: accountPartition(accountId),
  sk: `${MESSAGE_SK_PREFIX}${messageId}`,
});
export const messagesGsi1pk = (accountId: string, chatId: string) => `MSGS#${accountId}#${chatId}`;
export const messageGsi1 = (accountId: string, chatId: string, timestamp: number, messageId: string): Gsi1Key => ({
  gsi1pk: messagesGsi1pk(accountId, chatId),
  gsi1sk: `${sortableTime(timestamp)}#${messageId}`,
});

/** The `gsi1sk` bounds of a chat's messages whose timestamp is in [since, until]. */
export const messagesGsi1Range = (since: number, until: number) => ({
  from: sortableTime(since),
  to: `${sortableTime(until)}#\uffff`,
});
/** The lowest `gsi1sk` of a chat's message whose timestamp is `since` or later. */
export const messagesGsi1From = (since: number) => sortableTime(since);
/** The lowest `gsi1sk` of a chat whose last message is at `since` or later. */
export const chatsGsi1From = (since: number) => sortableTime(since);

/** Where a historical message's media is on WhatsApp, kept until the media is fetched (docs/history.md). */
export const historyMediaKey = (accountId: string, messageId: string): Key => ({
  pk: accountPartition(accountId),
  sk: `HMEDIA#${messageId}`,
});

/** A contact under its account (JIDs have no `#`): one Query of the prefix lists them all. */
export const CONTACT_SK_PREFIX = 'CONTACT#';
export const contactKey = (accountId: string, jid: string): Key => ({
  pk: accountPartition(accountId),
  sk: `${CONTACT_SK_PREFIX}${jid}`,
});

export const mediaKey = (accountId: string, mediaId: string): Key => ({
  pk: accountPartition(accountId),
  sk: `MEDIA#${mediaId}`,
});

export const outboundKey = (accountId: string, messageId: string): Key => ({
  pk: accountPartition(accountId),
  sk: `OUT#${messageId}`,
});

/** A pairing-code request in flight, by the id of the command that carries it. */
export const pairingCodeRequestKey = (accountId: string, commandId: string): Key => ({
  pk: accountPartition(accountId),
  sk: `PAIRCODE#${commandId}`,
});

/**
 * Write-ahead records of decrypted inbound messages, one per decrypted part of a stanza, in the
 * account's partition (deleted with it). Written before WhatsApp gets the delivery receipt.
 */
export const INBOX_SK_PREFIX = 'INBOX#';
export const inboxKey = (accountId: string, messageId: string, part: number): Key => ({
  pk: accountPartition(accountId),
  sk: `${INBOX_SK_PREFIX}${messageId}#${part}`,
});

/**
 * Webhook events whose row change is (or is about to be) written and that are not known to be
 * enqueued yet, when no write-ahead record holds them (core/store/event-outbox.ts). In the
 * account's partition, so that a resuming connector finds them with one Query of the prefix.
 */
export const OUTBOX_SK_PREFIX = 'OUTBOX#';
export const outboxKey = (accountId: string, id: string): Key => ({
  pk: accountPartition(accountId),
  sk: `${OUTBOX_SK_PREFIX}${id}`,
});

/**
 * The open webhook circuits, one item per target (by its hash: a URL may be longer than a sort
 * key), in one partition: a connector reads them all with one Query (core/store/webhook-circuits.ts).
 */
export const WEBHOOK_CIRCUITS_PK = 'WEBHOOK_CIRCUITS';
export const webhookCircuitKey = (targetHash: string): Key => ({ pk: WEBHOOK_CIRCUITS_PK, sk: `TARGET#${targetHash}` });

/** A client's Idempotency-Key on a send (core/store/idempotency.ts); any printable ASCII. */
export const idempotencyKey = (accountId: string, key: string): Key => ({
  pk: accountPartition(accountId),
  sk: `IDEM#${key}`,
});

/** Access keys and the QR awaiting a scan live in the account's partition: deleting the account removes them. */
export const API_KEY_SK_PREFIX = 'APIKEY#';
export const apiKeyKey = (accountId: string, keyId: string): Key => ({
  pk: accountPartition(accountId),
  sk: `${API_KEY_SK_PREFIX}${keyId}`,
});
export const qrKey = (accountId: string): Key => ({ pk: accountPartition(accountId), sk: 'QR' });

export const authPartition = (collectionName: string) => `AUTH#${collectionName}`;
export const authCredsKey = (collectionName: string): Key => ({ pk: authPartition(collectionName), sk: 'creds' });
export const authSignalKey = (collectionName: string, type: string, keyId: string): Key => ({
  pk: authPartition(collectionName),
  sk: `KEY#${type}#${keyId}`,
});

/**
 * Which account holds a `collectionName` (and so the auth state under it): one claim item per
 * name, so that two accounts can never share a WhatsApp session.
 */
export const collectionClaimKey = (collectionName: string): Key => ({ pk: `CLAIM#${collectionName}`, sk: 'CLAIM' });
/** Written once every account made before claims existed has been given its claim. */
export const CLAIMS_BACKFILLED_KEY: Key = { pk: 'CLAIMS', sk: 'BACKFILLED' };

/**
 * Webhook registrations, all in one partition so that one Query lists them (the connector
 * caches that list). A global one keeps the key it always had, `URL#<url>`; one scoped to an
 * account sorts under `ACCOUNT#<accountId>#` (account ids have no `#`), so its account's are one
 * prefix.
 */
export const WEBHOOKS_PARTITION = 'WEBHOOKS';
export const accountWebhooksPrefix = (accountId: string) => `ACCOUNT#${accountId}#URL#`;
export const webhookKey = (url: string, accountId?: string): Key => ({
  pk: WEBHOOKS_PARTITION,
  sk: accountId === undefined ? `URL#${url}` : `${accountWebhooksPrefix(accountId)}${url}`,
});

/** The WhatsApp Web version the connectors resolved (core/store/wa-version.ts): one item for the deployment. */
export const WA_VERSION_KEY: Key = { pk: 'WAVERSION', sk: 'CURRENT' };

export const leaseKey = (accountId: string): Key => ({ pk: `LEASE#${accountId}`, sk: 'LEASE' });
/** Scale-out: one partition each for the connectors' heartbeats and the shard leases, read with one Query. */
export const CONNECTORS_PARTITION = 'CONNECTORS';
export const connectorKey = (connectorId: string): Key => ({ pk: CONNECTORS_PARTITION, sk: `CONNECTOR#${connectorId}` });
export const SHARDS_PARTITION = 'SHARDS';
export const shardLeaseKey = (shard: number): Key => ({ pk: SHARDS_PARTITION, sk: `SHARD#${String(shard).padStart(3, '0')}` });

/**
 * S3 object keys, all under the account's prefix so that deletion is one prefix sweep, and all
 * under ACCOUNT_OBJECTS_PREFIX (media and uploads only), which MEDIA_RETENTION_DAYS expires.
 */
export const ACCOUNT_OBJECTS_PREFIX = 'accounts/';
export const accountObjectPrefix = (accountId: string) => `${ACCOUNT_OBJECTS_PREFIX}${accountId}/`;
export const mediaObjectKey = (accountId: string, mediaId: string) => `accounts/${accountId}/media/${mediaId}`;
export const uploadObjectKey = (accountId: string, uploadId: string) => `accounts/${accountId}/uploads/${uploadId}`;

/** The secret of a poll (its votes are encrypted with it), beside the poll's message item and never part of it. */
export const pollSecretKey = (accountId: string, messageId: string): Key => ({
  pk: accountPartition(accountId),
  sk: `POLLSECRET#${messageId}`,
});

/** A group operation in flight (core/store/group-requests.ts), by the id of the command that carries it. */
export const groupRequestKey = (accountId: string, commandId: string): Key => ({
  pk: accountPartition(accountId),
  sk: `GROUPREQ#${commandId}`,
});

/**
 * Paced sends (core/store/send-queue.ts): the account's send counts and queue tickets under
 * `PACE`, each queued send under `PACE#Q#<ticket>` (zero-padded, so key order is send order).
 * One prefix: a connector taking the account reads both with one Query.
 */
export const PACE_SK_PREFIX = 'PACE';
export const paceKey = (accountId: string): Key => ({ pk: accountPartition(accountId), sk: PACE_SK_PREFIX });
export const QUEUED_SEND_SK_PREFIX = 'PACE#Q#';
export const queuedSendKey = (accountId: string, ticket: number): Key => ({
  pk: accountPartition(accountId),
  sk: `${QUEUED_SEND_SK_PREFIX}${String(ticket).padStart(12, '0')}`,
});
