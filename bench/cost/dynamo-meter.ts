/**
 * DynamoDB requests and capacity units, metered inside the embedded dynalite (so every process's
 * requests are counted, the connector children's included), computed the way DynamoDB on demand
 * bills them (dynalite's own ReturnConsumedCapacity leaves out index writes):
 * - a write costs 1 WCU per KB (rounded up) of the larger of the item before and after, also when
 *   its condition fails; each index copy it writes costs the same again (an index entry whose key
 *   moved is a delete plus a put: both);
 * - a read costs what dynalite reports for it (1 RCU per 4 KB read, half when eventually
 *   consistent; a Query by the items it read, before any filter), and at least one 4 KB read.
 * Each unit is booked to the kind of item it touched (`MSG`, `CHAT`, `KEY`, `LEASE`...) and to
 * `account` when the item belongs to one account (its partition names it), else `fixed`.
 *
 * It patches dynalite's action modules in the require cache, so it must be installed before
 * dynalite is first loaded: bench/cost.ts imports this module first.
 */
import { createRequire } from 'node:module';

type Attr = Record<string, unknown>;
type Item = Record<string, Attr>;
type Callback = (error: unknown, result?: Record<string, unknown>) => void;
type Action = (store: DynaliteStore, data: Record<string, unknown>, cb: Callback) => void;
interface DynaliteStore {
  getTable(name: string, cb: (error: unknown, table: DynaliteTable) => void): void;
  getItemDb(name: string): { get(key: string, cb: (error: unknown, item?: Item) => void): void };
}
interface DynaliteTable {
  GlobalSecondaryIndexes?: Array<{ IndexName: string; KeySchema: Array<{ AttributeName: string }> }>;
}

type Scope = 'account' | 'fixed';

export interface DynamoTotals {
  /** Requests by action (PutItem, Query...) and scope. */
  requests: Map<string, number>;
  /** Requests by action and the kinds of item they name (`GetItem OUT`, `BatchWriteItem AUTH session+INBOX`). */
  requestKinds: Map<string, number>;
  /** Capacity by item kind and scope (`MSG account`, `SHARD fixed`...). */
  units: Map<string, { writeTable: number; writeIndex: number; read: number; writes: number }>;
}

const require = createRequire(import.meta.url);
const db = require('dynalite/db') as { createKey(item: Item, table: DynaliteTable): string; itemSize(item: Item): number };

const totals: DynamoTotals = { requests: new Map(), requestKinds: new Map(), units: new Map() };
/** Marks the calls a batch action makes itself (dynalite passes ReturnConsumedCapacity on to them). */
const INNER = 'INDEXES';

const ACCOUNT_PARTITION = /^(ACCOUNT|AUTH|LEASE|CLAIM|CHATS|MSGS)#/;
const textOf = (attr: Attr | undefined) => (attr && typeof attr.S === 'string' ? attr.S : '');

/** The kind of an item by its key: the partition's prefix, and under an account the sort key's. */
function kindOf(key: Item): { kind: string; scope: Scope } {
  const pk = textOf(key.pk);
  const sk = textOf(key.sk);
  const partition = pk.split('#')[0] ?? pk;
  const scope: Scope = ACCOUNT_PARTITION.test(pk) ? 'account' : 'fixed';
  if (partition === 'ACCOUNT') return { kind: sk === '' ? 'ACCOUNT' : (sk.split('#')[0] ?? sk), scope };
  if (partition === 'AUTH') return { kind: sk === 'creds' ? 'AUTH creds' : `AUTH ${sk.split('#')[1] ?? 'key'}`, scope };
  return { kind: partition, scope };
}

/** A request's scope: `account` when its key or key condition names an account's partition. */
function scopeOfRequest(data: Record<string, unknown>): Scope {
  return /"S":"(ACCOUNT|AUTH|LEASE|CLAIM|CHATS|MSGS)#/.test(JSON.stringify(data)) ? 'account' : 'fixed';
}

function book(kind: string, scope: Scope, add: { writeTable?: number; writeIndex?: number; read?: number; writes?: number }) {
  const name = `${kind} ${scope}`;
  const entry = totals.units.get(name) ?? { writeTable: 0, writeIndex: 0, read: 0, writes: 0 };
  entry.writeTable += add.writeTable ?? 0;
  entry.writeIndex += add.writeIndex ?? 0;
  entry.read += add.read ?? 0;
  entry.writes += add.writes ?? 0;
  totals.units.set(name, entry);
}

const kb = (item: Item | undefined) => (item ? Math.max(1, Math.ceil(db.itemSize(item) / 1024)) : 0);

/** Index write units of one item write, from the item before and after (the index projects all). */
function indexUnits(table: DynaliteTable, before: Item | undefined, after: Item | undefined): number {
  let units = 0;
  for (const index of table.GlobalSecondaryIndexes ?? []) {
    const names = index.KeySchema.map((k) => k.AttributeName);
    const keyOf = (item: Item | undefined) =>
      item && names.every((name) => item[name] !== undefined) ? JSON.stringify(names.map((name) => item[name])) : undefined;
    const was = keyOf(before);
    const is = keyOf(after);
    if (was !== undefined && is !== undefined) units += was === is ? Math.max(kb(before), kb(after)) : kb(before) + kb(after);
    else if (is !== undefined) units += kb(after);
    else if (was !== undefined) units += kb(before);
  }
  return units;
}

const isConditionFailure = (error: unknown) =>
  typeof error === 'object' && error !== null && /ConditionalCheckFailed/.test(JSON.stringify((error as { body?: unknown }).body ?? ''));

function countRequest(action: string, data: Record<string, unknown>) {
  if (data.ReturnConsumedCapacity === INNER) return;
  const name = `${action} ${scopeOfRequest(data)}`;
  totals.requests.set(name, (totals.requests.get(name) ?? 0) + 1);
  const kinds = `${action} ${kindsOfRequest(data)}`;
  totals.requestKinds.set(kinds, (totals.requestKinds.get(kinds) ?? 0) + 1);
}

/** The kinds of item a request names: its key's, a Query's partition's, or each of a batch's items'. */
function kindsOfRequest(data: Record<string, unknown>): string {
  const batch = data.RequestItems as Record<string, Array<Record<string, { Item?: Item; Key?: Item }>> | { Keys?: Item[] }> | undefined;
  const keys: Item[] = [];
  for (const entries of Object.values(batch ?? {})) {
    if (Array.isArray(entries)) for (const entry of entries) keys.push((entry.PutRequest?.Item ?? entry.DeleteRequest?.Key) as Item);
    else keys.push(...(entries.Keys ?? []));
  }
  if (!batch) {
    const key = (data.Item ?? data.Key ?? firstKeyValue(data)) as Item | undefined;
    if (key) keys.push(key);
  }
  const kinds = [...new Set(keys.filter(Boolean).map((key) => kindOf(key).kind))].sort();
  return kinds.length > 0 ? kinds.join('+') : 'other';
}

/** PutItem, UpdateItem, DeleteItem (alone or inside a BatchWriteItem): the item before and after. */
function meteredWrite(action: string, original: Action): Action {
  return (store, data, cb) => {
    countRequest(action, data);
    const tableName = String(data.TableName);
    store.getTable(tableName, (tableError, table) => {
      if (tableError) return original(store, data, cb);
      const keySource = (action === 'PutItem' ? data.Item : data.Key) as Item;
      const key = db.createKey(keySource, table);
      const items = store.getItemDb(tableName);
      const { kind, scope } = kindOf(keySource);
      items.get(key, (_readError, before) => {
        original(store, data, (error, result) => {
          if (error) {
            if (isConditionFailure(error)) book(kind, scope, { writeTable: Math.max(1, kb(before)), writes: 1 });
            return cb(error, result);
          }
          const settle = (after: Item | undefined) => {
            book(kind, scope, { writeTable: Math.max(1, kb(before), kb(after)), writeIndex: indexUnits(table, before, after), writes: 1 });
            cb(null, result);
          };
          if (action === 'DeleteItem') return settle(undefined);
          if (action === 'PutItem') return settle(data.Item as Item);
          items.get(key, (_afterError, after) => settle(after));
        });
      });
    });
  };
}

/** GetItem, Query, Scan, BatchGetItem: the units dynalite reports, asked for and then removed. */
function meteredRead(action: string, original: Action): Action {
  return (store, data, cb) => {
    countRequest(action, data);
    const inner = data.ReturnConsumedCapacity === INNER;
    const asked = data.ReturnConsumedCapacity;
    const request = inner ? data : { ...data, ReturnConsumedCapacity: action === 'BatchGetItem' ? INNER : 'TOTAL' };
    original(store, request, (error, result) => {
      if (!error && result && !inner) {
        const consumed = result.ConsumedCapacity as { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> | undefined;
        const reported = Array.isArray(consumed)
          ? consumed.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0)
          : (consumed?.CapacityUnits ?? 0);
        // DynamoDB bills a read that finds nothing (an empty Query, a missing item) as one 4 KB
        // read; dynalite reports 0 for it.
        const units = action === 'BatchGetItem' ? reported : Math.max(reported, data.ConsistentRead ? 1 : 0.5);
        const keySource = (data.Key ?? firstKeyValue(data)) as Item | undefined;
        const { kind, scope } = keySource ? kindOf(keySource) : { kind: 'other', scope: scopeOfRequest(data) };
        book(`${kind} (read)`, scope, { read: units });
        if (asked === undefined) delete result.ConsumedCapacity;
      }
      cb(error, result);
    });
  };
}

/** A Query's partition value (`pk` or `gsi1pk`) as a key, or a batch's first key. */
function firstKeyValue(data: Record<string, unknown>): Item | undefined {
  const values = data.ExpressionAttributeValues as Record<string, Attr> | undefined;
  const placeholder = /^\s*\w+\s*=\s*(:\w+)/.exec(String(data.KeyConditionExpression ?? ''))?.[1];
  const pk = placeholder ? values?.[placeholder] : undefined;
  // A sort key prefix (begins_with) names the kind of item under an account (INBOX#, OUTBOX#...).
  const prefix = /begins_with\(\s*sk\s*,\s*(:\w+)\s*\)/.exec(String(data.KeyConditionExpression ?? ''))?.[1];
  const sk = prefix ? values?.[prefix] : undefined;
  if (pk) return sk ? { pk, sk } : { pk };
  const requestItems = data.RequestItems as Record<string, { Keys?: Item[] }> | undefined;
  return requestItems ? Object.values(requestItems)[0]?.Keys?.[0] : undefined;
}

const ACTIONS: Record<string, [string, (action: string, original: Action) => Action]> = {
  putItem: ['PutItem', meteredWrite],
  updateItem: ['UpdateItem', meteredWrite],
  deleteItem: ['DeleteItem', meteredWrite],
  getItem: ['GetItem', meteredRead],
  query: ['Query', meteredRead],
  scan: ['Scan', meteredRead],
  batchGetItem: ['BatchGetItem', meteredRead],
};

for (const [file, [action, meter]] of Object.entries(ACTIONS)) {
  const path = require.resolve(`dynalite/actions/${file}`);
  const original = require(path) as Action;
  const cached = require.cache[path];
  if (cached) cached.exports = meter(action, original);
}
{
  // A BatchWriteItem is one request; its items are metered by the PutItem/DeleteItem it runs.
  const path = require.resolve('dynalite/actions/batchWriteItem');
  const original = require(path) as Action;
  const cached = require.cache[path];
  if (cached) {
    cached.exports = ((store, data, cb) => {
      countRequest('BatchWriteItem', data);
      const asked = data.ReturnConsumedCapacity;
      original(store, { ...data, ReturnConsumedCapacity: INNER }, (error, result) => {
        if (result && asked === undefined) delete result.ConsumedCapacity;
        cb(error, result);
      });
    }) satisfies Action;
  }
}
if (require.cache[require.resolve('dynalite')]) throw new Error('bench/cost/dynamo-meter.ts must be imported before dynalite is loaded');

/** A copy of the totals so far (windows are differences of two copies). */
export function dynamoTotals(): DynamoTotals {
  return {
    requests: new Map(totals.requests),
    requestKinds: new Map(totals.requestKinds),
    units: new Map([...totals.units].map(([name, entry]) => [name, { ...entry }])),
  };
}
