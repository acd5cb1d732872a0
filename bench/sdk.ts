/**
 * `npm run bench:sdk [requests]` (or BENCH_SDK_REQUESTS, default 6,000): the CPU one DynamoDB
 * request costs the connector's process, side by side in one run: plain undici (the transport
 * alone: a JSON POST, its answer parsed, no signing), the AWS SDK as it ships (node:http), the
 * SDK on undici with its middleware cached and no logger middleware (the connector's clients
 * before `core/sdk-serde.ts`), and the connector's own client (`createClients` with
 * `CONNECTOR_CLIENT_OPTIONS`). Each is a BatchWriteItem of one item, 8 at a time, against a
 * local HTTP server in a child process (so its CPU is not counted) that answers as DynamoDB does.
 * The variants run twice, in opposite orders, and the figures are their means. Ratios are to
 * plain undici.
 */
import { BatchWriteItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { UndiciHttpHandler } from '@smithy/undici-http-handler';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';
import { CONNECTOR_CLIENT_OPTIONS } from '../connector/aws-transport.js';
import { createClients, destroyClients } from '../core/aws.js';
import { loadConfig } from '../core/config.js';

const requests = Number(process.argv[2] ?? process.env.BENCH_SDK_REQUESTS ?? 6_000);
const CONCURRENCY = 8;
const WARM_UP = 1_000;
const region = 'us-east-1';
const credentials = { accessKeyId: 'bench', secretAccessKey: 'bench' };

/** A server that answers every POST as DynamoDB answers a BatchWriteItem with nothing left over. */
const SERVER = `
const server = require('node:http').createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.setHeader('content-type', 'application/x-amz-json-1.0');
    res.setHeader('x-amzn-requestid', 'bench');
    res.end('{"UnprocessedItems":{}}');
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

const item = {
  PutRequest: {
    Item: { pk: { S: 'ACCOUNT#bench' }, sk: { S: 'MSG#3EB0C767D26A1B2E4F5A' }, text: { S: 'hello there' }, t: { N: '1764316800' } },
  },
};

interface Variant {
  name: string;
  send(): Promise<unknown>;
  close(): void | Promise<void>;
}

async function main(): Promise<void> {
  const server = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [port] = (await once(createInterface({ input: server.stdout }), 'line')) as [string];
  const endpoint = `http://127.0.0.1:${port}`;
  const TableName = 'bench';
  const input = { RequestItems: { [TableName]: [item] } };

  const dispatcher = new Agent({ connections: 50 });
  const plain: Variant = {
    name: 'plain undici (no SDK, no signing)',
    async send() {
      const response = await request(endpoint, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.BatchWriteItem' },
        body: JSON.stringify(input),
      });
      return JSON.parse(await response.body.text());
    },
    close: () => dispatcher.close(),
  };
  const shipped = new DynamoDBClient({ region, endpoint, credentials });
  const cached = new DynamoDBClient({
    region,
    endpoint,
    credentials,
    cacheMiddleware: true,
    requestHandler: new UndiciHttpHandler({ dispatcher: { connections: 50 } }),
  });
  cached.middlewareStack.remove('loggerMiddleware');
  const clients = createClients(
    loadConfig({ AWS_ENDPOINT_URL_DYNAMODB: endpoint, AWS_REGION: region, AWS_ACCESS_KEY_ID: 'bench', AWS_SECRET_ACCESS_KEY: 'bench' }),
    CONNECTOR_CLIENT_OPTIONS,
  );
  const sdk = (name: string, client: DynamoDBClient, close: () => void): Variant => ({
    name,
    send: () => client.send(new BatchWriteItemCommand(input)),
    close,
  });
  const variants = [
    plain,
    sdk('AWS SDK as it ships (node:http)', shipped, () => shipped.destroy()),
    sdk('AWS SDK on undici, middleware cached, no logger middleware', cached, () => cached.destroy()),
    sdk("the connector's client (also its serde without copies)", clients.dynamoRaw, () => destroyClients(clients)),
  ];

  const cpuMs = new Map<Variant, number[]>();
  const wallMs = new Map<Variant, number[]>();
  for (const variant of variants) await run(variant, WARM_UP);
  for (const order of [variants, [...variants].reverse()]) {
    for (const variant of order) {
      const { cpu, wall } = await run(variant, requests);
      cpuMs.set(variant, [...(cpuMs.get(variant) ?? []), cpu]);
      wallMs.set(variant, [...(wallMs.get(variant) ?? []), wall]);
    }
  }
  const mean = (values: number[] | undefined) => (values ?? []).reduce((a, b) => a + b, 0) / (values?.length || 1);
  const base = mean(cpuMs.get(plain));
  console.log(`\n== one BatchWriteItem (one item), ${requests} requests ${CONCURRENCY} at a time, CPU of this process per request ==`);
  for (const variant of variants) {
    const cpu = mean(cpuMs.get(variant));
    console.log(
      `${variant.name}: ${cpu.toFixed(3)} ms CPU (runs ${cpuMs
        .get(variant)
        ?.map((value) => value.toFixed(3))
        .join(', ')}), ${mean(wallMs.get(variant)).toFixed(3)} ms wall, ${(cpu / base).toFixed(1)}x plain undici`,
    );
  }
  for (const variant of variants) await variant.close();
  server.kill();
}

/** CPU and wall milliseconds per request of `count` requests, CONCURRENCY at a time. */
async function run(variant: Variant, count: number): Promise<{ cpu: number; wall: number }> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < count) await variant.send();
    }),
  );
  const used = process.cpuUsage(cpu);
  return { cpu: (used.user + used.system) / 1000 / count, wall: (performance.now() - started) / count };
}

await main();
