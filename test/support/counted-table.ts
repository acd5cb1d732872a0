import { createClients, destroyClients, type AwsClients } from '../../core/aws.js';
import type { Config } from '../../core/config.js';
import { tableOf, type Table } from '../../core/store/table.js';

export interface CountedTable {
  table: Table;
  /** DynamoDB requests sent so far, by command name (PutItemCommand, BatchWriteItemCommand...). */
  counts: Map<string, number>;
  close(): void;
}

/**
 * The stack's table on clients of its own, whose DynamoDB requests are counted. Own clients: the
 * raw client builds each command's middleware once (cacheMiddleware), so a counter added to a
 * client already in use would miss the commands it had sent before; and the group commits
 * shared per client (table-writes.ts) start empty.
 */
export function countedTable(config: Config): CountedTable {
  const clients = createClients(config);
  return { table: tableOf(config, clients), counts: countRequests(clients), close: () => destroyClients(clients) };
}

/**
 * Counts the DynamoDB and SQS requests of `clients` by command name, from now on: give it
 * clients nothing has used yet (see countedTable).
 */
export function countRequests(clients: AwsClients): Map<string, number> {
  const counts = new Map<string, number>();
  const count = (name = '?') => counts.set(name, (counts.get(name) ?? 0) + 1);
  const at = { step: 'initialize', name: 'requestCounter' } as const;
  for (const client of [clients.dynamo, clients.dynamoRaw]) {
    client.middlewareStack.add(
      (next, context) => (args) => {
        count(context.commandName);
        return next(args);
      },
      at,
    );
  }
  clients.sqs.middlewareStack.add(
    (next, context) => (args) => {
      count(context.commandName);
      return next(args);
    },
    at,
  );
  return counts;
}
