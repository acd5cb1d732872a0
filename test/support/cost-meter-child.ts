/**
 * bench:cost's DynamoDB meter (bench/cost/dynamo-meter.ts) over a few known writes and reads
 * against the emulators, in a process of its own (the meter must be in place before dynalite
 * loads); prints the meter's totals as one JSON line, by step, and exits.
 */
import '../../bench/cost/dynamo-meter.js';

const { dynamoTotals } = await import('../../bench/cost/dynamo-meter.js');
const { startEmulators } = await import('../../infra/local/emulators.js');
const { loadConfig } = await import('../../core/config.js');
const { createClients, destroyClients } = await import('../../core/aws.js');
const { ensureResources } = await import('../../core/resources.js');
const { BatchWriteCommand, PutCommand, QueryCommand, UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
const { pino } = await import('pino');

const emulators = await startEmulators();
const config = loadConfig({ ...emulators.env, LOG_LEVEL: 'silent' });
const clients = createClients(config);
await ensureResources(config, clients, pino({ level: 'silent' }));
const TableName = config.TABLE_NAME;
const steps: Record<string, unknown> = {};
const step = async (name: string, work: () => Promise<unknown>) => {
  await work().catch(() => undefined);
  const { requests, units } = dynamoTotals();
  steps[name] = { requests: Object.fromEntries(requests), units: Object.fromEntries(units) };
};

const padding = 'x'.repeat(1500);
const message = { pk: 'ACCOUNT#a1', sk: 'MSG#m1', gsi1pk: 'MSGS#a1#c1', gsi1sk: '001', text: padding };
await step('put with index keys, 1.5 KB', () => clients.dynamo.send(new PutCommand({ TableName, Item: message })));
await step('update moving the index key', () =>
  clients.dynamo.send(
    new UpdateCommand({
      TableName,
      Key: { pk: 'ACCOUNT#a1', sk: 'MSG#m1' },
      UpdateExpression: 'SET gsi1sk = :k',
      ExpressionAttributeValues: { ':k': '002' },
    }),
  ),
);
await step('update keeping the index key', () =>
  clients.dynamo.send(
    new UpdateCommand({
      TableName,
      Key: { pk: 'ACCOUNT#a1', sk: 'MSG#m1' },
      UpdateExpression: 'SET #s = :s',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':s': 'read' },
    }),
  ),
);
await step('a failed condition', () =>
  clients.dynamo.send(
    new PutCommand({ TableName, Item: { pk: 'ACCOUNT#a1', sk: 'MSG#m1' }, ConditionExpression: 'attribute_not_exists(pk)' }),
  ),
);
await step('a batch of two small items', () =>
  clients.dynamo.send(
    new BatchWriteCommand({
      RequestItems: {
        [TableName]: [{ PutRequest: { Item: { pk: 'SHARDS', sk: 'S1' } } }, { PutRequest: { Item: { pk: 'SHARDS', sk: 'S2' } } }],
      },
    }),
  ),
);
await step('a query of the index', () =>
  clients.dynamo.send(
    new QueryCommand({
      TableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :p',
      ExpressionAttributeValues: { ':p': 'MSGS#a1#c1' },
    }),
  ),
);
await step('an empty query', () =>
  clients.dynamo.send(
    new QueryCommand({ TableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'ACCOUNT#none' } }),
  ),
);
process.stdout.write(`${JSON.stringify(steps)}\n`);
destroyClients(clients);
await emulators.stop();
process.exit(0);
