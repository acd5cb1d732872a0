import { createClients, destroyClients } from '../../core/aws.js';
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
  const counts = new Map<string, number>();
  for (const client of [clients.dynamo, clients.dynamoRaw]) {
    client.middlewareStack.add(
      (next, context) => (args) => {
        const name = context.commandName ?? '?';
        counts.set(name, (counts.get(name) ?? 0) + 1);
        return next(args);
      },
      { step: 'initialize', name: 'requestCounter' },
    );
  }
  return { table: tableOf(config, clients), counts, close: () => destroyClients(clients) };
}
