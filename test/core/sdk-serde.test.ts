import {
  BatchWriteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { HttpRequest } from '@smithy/core/protocols';
import { UndiciHttpHandler } from '@smithy/undici-http-handler';
import { describe, expect, it } from 'vitest';
import { useSerdeWithoutCopies } from '../../core/sdk-serde.js';
import { useTestStack } from '../support/test-stack.js';

const stack = useTestStack();

/** What a request says, without what changes from one request to the next (time, signature, ids). */
interface SentRequest {
  method: string;
  hostname: string;
  port: number | undefined;
  path: string;
  headers: Record<string, string>;
  body: string;
}

const VARYING_HEADERS = new Set([
  'x-amz-date',
  'authorization',
  'amz-sdk-invocation-id',
  'amz-sdk-request',
  'user-agent',
  'x-amz-user-agent',
]);

/**
 * Each request is noted on its way out, then goes to the emulator instead of the AWS endpoint the
 * client resolved (so the endpoint rules run as in production, and the answers are real).
 */
class RecordingHandler extends UndiciHttpHandler {
  constructor(
    private readonly sent: SentRequest[],
    private readonly emulator: URL,
  ) {
    super({});
  }

  override handle(request: HttpRequest, options?: Parameters<UndiciHttpHandler['handle']>[1]) {
    this.sent.push({
      method: request.method,
      hostname: request.hostname,
      port: request.port,
      path: request.path,
      headers: Object.fromEntries(Object.entries(request.headers).filter(([name]) => !VARYING_HEADERS.has(name.toLowerCase()))),
      body: String(request.body ?? ''),
    });
    request.protocol = this.emulator.protocol;
    request.hostname = this.emulator.hostname;
    request.port = Number(this.emulator.port);
    return super.handle(request, options);
  }
}

/** Clients of AWS's DynamoDB or SQS endpoint (answered by the emulator), with the SDK's serde and with ours. */
function clientPair<C extends DynamoDBClient | SQSClient>(make: (config: DynamoDBClientConfig) => C, emulator: string | undefined) {
  if (!emulator) throw new Error('the test stack has no emulator endpoint');
  const make1 = (lean: boolean) => {
    const sent: SentRequest[] = [];
    const { config } = stack.stack;
    const client = make({
      region: config.AWS_REGION,
      credentials: { accessKeyId: config.AWS_ACCESS_KEY_ID ?? 'test', secretAccessKey: config.AWS_SECRET_ACCESS_KEY ?? 'test' },
      cacheMiddleware: true,
      requestHandler: new RecordingHandler(sent, new URL(emulator)),
    });
    if (lean) useSerdeWithoutCopies(client);
    return { client, sent };
  };
  return { sdk: make1(false), ours: make1(true) };
}

const withoutMetadata = (output: object) => Object.fromEntries(Object.entries(output).filter(([name]) => name !== '$metadata'));

describe('the SDK serde without copies (core/sdk-serde.ts)', () => {
  it("sends DynamoDB the SDK's own requests and reads the same answers and errors", async () => {
    const { config } = stack.stack;
    const { sdk, ours } = clientPair((c) => new DynamoDBClient(c), config.AWS_ENDPOINT_URL_DYNAMODB ?? config.AWS_ENDPOINT_URL);
    const TableName = config.TABLE_NAME;
    const Key = { pk: { S: 'SERDE#1' }, sk: { S: 'ITEM' } };
    // Ours hands the protocol an object that inherits the client's settings: no copy of them.
    const contexts: object[] = [];
    const protocol = (ours.client.config as unknown as { protocol: { serializeRequest: (...args: unknown[]) => unknown } }).protocol;
    const serializeRequest = protocol.serializeRequest.bind(protocol);
    protocol.serializeRequest = (operation, input, context) => {
      contexts.push(context as object);
      return serializeRequest(operation, input, context);
    };
    const results: unknown[][] = [];
    for (const { client } of [sdk, ours]) {
      const outputs: unknown[] = [];
      outputs.push(
        withoutMetadata(await client.send(new PutItemCommand({ TableName, Item: { ...Key, n: { N: '7' }, tags: { SS: ['a', 'b'] } } }))),
      );
      const refused = await client
        .send(
          new PutItemCommand({
            TableName,
            Item: Key,
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        )
        .catch((error: unknown) => error as Error & { $metadata?: { httpStatusCode?: number }; $fault?: string; Item?: unknown });
      expect(refused).toBeInstanceOf(Error);
      if (!(refused instanceof Error)) throw new Error('the conditional put was not refused');
      outputs.push({ name: refused.name, fault: refused.$fault, status: refused.$metadata?.httpStatusCode, item: refused.Item });
      expect(Object.getOwnPropertyDescriptor(refused, '$response')).toBeDefined();
      outputs.push(withoutMetadata(await client.send(new GetItemCommand({ TableName, Key, ConsistentRead: true }))));
      outputs.push(
        withoutMetadata(
          await client.send(
            new QueryCommand({
              TableName,
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': Key.pk },
              ConsistentRead: true,
            }),
          ),
        ),
      );
      outputs.push(
        withoutMetadata(await client.send(new BatchWriteItemCommand({ RequestItems: { [TableName]: [{ DeleteRequest: { Key } }] } }))),
      );
      results.push(outputs);
    }
    expect(ours.sent).toEqual(sdk.sent);
    expect(ours.sent).toHaveLength(5);
    expect(ours.sent[0]?.hostname).toBe(`dynamodb.${config.AWS_REGION}.amazonaws.com`);
    expect(results[1]).toEqual(results[0]);
    expect(contexts).toHaveLength(5);
    for (const context of contexts) expect(Object.getPrototypeOf(context)).toBe(ours.client.config);
    expect(results[0]?.[1]).toMatchObject({ name: 'ConditionalCheckFailedException', status: 400 });
    expect(results[0]?.[2]).toMatchObject({ Item: { n: { N: '7' } } });
    for (const { client } of [sdk, ours]) client.destroy();
  });

  it("sends SQS the SDK's own requests and reads the same answers", async () => {
    const { config } = stack.stack;
    const { sdk, ours } = clientPair((c) => new SQSClient(c), config.AWS_ENDPOINT_URL_SQS ?? config.AWS_ENDPOINT_URL);
    const QueueUrl = await stack.queues.webhookQueueUrl();
    const bodies: string[][] = [];
    for (const { client } of [sdk, ours]) {
      await client.send(new SendMessageBatchCommand({ QueueUrl, Entries: [{ Id: '1', MessageBody: '{"serde":"one"}' }] }));
      const received = await client.send(
        new ReceiveMessageCommand({
          QueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
      );
      bodies.push((received.Messages ?? []).map((message) => `${message.Body} ${message.Attributes?.ApproximateReceiveCount}`));
      await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl,
          Entries: (received.Messages ?? []).map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle ?? '' })),
        }),
      );
    }
    expect(bodies).toEqual([['{"serde":"one"} 1'], ['{"serde":"one"} 1']]);
    // The SDK takes the queue URL's host as the endpoint (not the one the client was given).
    expect(ours.sent[0]?.hostname).toBe(new URL(QueueUrl).hostname);
    // The deletions name receipt handles, which differ: the sends and receives are the same.
    expect(ours.sent.slice(0, 2)).toEqual(sdk.sent.slice(0, 2));
    expect(ours.sent.map((request) => request.headers['x-amz-target'])).toEqual(sdk.sent.map((request) => request.headers['x-amz-target']));
    for (const { client } of [sdk, ours]) client.destroy();
  });
});
