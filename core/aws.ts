import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Config } from './config.js';
import { useSerdeWithoutCopies } from './sdk-serde.js';
import { MARSHALL_OPTIONS } from './store/attributes.js';

export interface AwsClients {
  dynamo: DynamoDBDocumentClient;
  /**
   * The same table without the document layer, its middleware built once per command
   * (`cacheMiddleware`): the inbound path's requests go through it (core/store/attributes.ts).
   */
  dynamoRaw: DynamoDBClient;
  sqs: SQSClient;
  s3: S3Client;
}

/**
 * How the clients reach AWS, when not the SDK's default (node:http): the connector gives its
 * DynamoDB and SQS clients undici (connector/aws-transport.ts). Kept out of this module so that
 * the Lambda bundle, which imports it, does not carry undici.
 */
export interface ClientOptions {
  /** A request handler for each DynamoDB and SQS client (each gets its own connections). */
  requestHandler?: () => DynamoDBClientConfig['requestHandler'];
}

/**
 * Builds the SDK clients from the config rather than letting each SDK read process.env, so a
 * test or a second stack in the same process can point at its own emulators.
 */
export function createClients(config: Config, options: ClientOptions = {}): AwsClients {
  const common = commonOf(config);
  const sqsEndpoint = config.AWS_ENDPOINT_URL_SQS ?? config.AWS_ENDPOINT_URL;
  const s3Endpoint = config.AWS_ENDPOINT_URL_S3 ?? config.AWS_ENDPOINT_URL;
  const { dynamo, dynamoRaw } = createDynamoClients(config, options);
  // Emulators answer with queue URLs on hosts like sqs.us-east-1.localhost: keep requests on
  // the configured endpoint instead of following them.
  // cacheMiddleware: the middleware chain of each command is built once, not on every request
  // (the SQS calls are on the inbound path: event sends, receives, acks).
  // md5: false: the SDK would hash every body it sends and receives to compare with SQS's MD5
  // of it, a check of the transport that TLS makes already (the emulators are on loopback).
  const sqs = new SQSClient({
    ...common,
    ...handlerOf(options),
    cacheMiddleware: true,
    md5: false,
    ...(sqsEndpoint ? { endpoint: sqsEndpoint, useQueueUrlAsEndpoint: false } : {}),
  });
  // Emulators and MinIO serve buckets by path, not by virtual host, and older ones do not
  // understand the SDK's default streaming checksums (aws-chunked trailers).
  const s3 = new S3Client({
    ...common,
    ...(s3Endpoint
      ? {
          endpoint: s3Endpoint,
          forcePathStyle: true,
          requestChecksumCalculation: 'WHEN_REQUIRED' as const,
          responseChecksumValidation: 'WHEN_REQUIRED' as const,
        }
      : {}),
  });
  // The SDK's logger middleware copies every input and output through its schema's log filter
  // on each call even with no logger configured (it calls the no-op logger with them): ~3% of
  // the connector's CPU on the inbound path. Nothing here gives the SDK a logger.
  for (const client of [sqs, s3]) client.middlewareStack.remove(SDK_LOGGER_MIDDLEWARE);
  useSerdeWithoutCopies(sqs);
  return { dynamo, dynamoRaw, sqs, s3 };
}

/**
 * DynamoDB clients of their own (their own connections), for what must never queue behind the
 * shared clients' requests: the connector's heartbeat. A client keeps at most 50 connections
 * open, and a thousand accounts resuming queue thousands of key reads and writes on them; a beat
 * queued behind those can run the heartbeat out, and every socket is dropped then.
 * `destroyDynamoClients` closes them.
 */
export function createDynamoClients(config: Config, options: ClientOptions = {}): Pick<AwsClients, 'dynamo' | 'dynamoRaw'> {
  const endpoint = config.AWS_ENDPOINT_URL_DYNAMODB ?? config.AWS_ENDPOINT_URL;
  const dynamoConfig = () => ({ ...commonOf(config), ...handlerOf(options), ...(endpoint ? { endpoint } : {}) });
  // lib-dynamodb refuses a client with cacheMiddleware, so the document client has its own:
  // without the cache each call resolves its middleware stack again (about half of the SDK's
  // CPU per PutItem measured in docs/benchmarks.md).
  const documentBase = new DynamoDBClient(dynamoConfig());
  // A copy: lib-dynamodb writes its own defaults into the options object it is given.
  const dynamo = DynamoDBDocumentClient.from(documentBase, { marshallOptions: { ...MARSHALL_OPTIONS } });
  const dynamoRaw = new DynamoDBClient({ ...dynamoConfig(), cacheMiddleware: true });
  for (const client of [documentBase, dynamoRaw]) {
    client.middlewareStack.remove(SDK_LOGGER_MIDDLEWARE);
    useSerdeWithoutCopies(client);
  }
  documentBases.set(dynamo, documentBase);
  return { dynamo, dynamoRaw };
}

export function destroyDynamoClients(clients: Pick<AwsClients, 'dynamo' | 'dynamoRaw'>): void {
  clients.dynamo.destroy();
  documentBases.get(clients.dynamo)?.destroy();
  clients.dynamoRaw.destroy();
}

const handlerOf = (options: ClientOptions) => (options.requestHandler ? { requestHandler: options.requestHandler() } : {});

/**
 * Region and credentials, the same for every client; `region` for a client of another region
 * (the connector's AWS event targets, connector/webhooks/targets/).
 */
export function commonOf(config: Config, region = config.AWS_REGION) {
  const credentials =
    config.AWS_ACCESS_KEY_ID && config.AWS_SECRET_ACCESS_KEY
      ? { accessKeyId: config.AWS_ACCESS_KEY_ID, secretAccessKey: config.AWS_SECRET_ACCESS_KEY }
      : undefined;
  return { region, ...(credentials ? { credentials } : {}) };
}

/** The name @aws-sdk/core registers its logger middleware under (getLoggerPlugin). */
const SDK_LOGGER_MIDDLEWARE = 'loggerMiddleware';

/** The DynamoDB client under each document client (its destroy() leaves that one open). */
const documentBases = new WeakMap<DynamoDBDocumentClient, DynamoDBClient>();

export function destroyClients(clients: AwsClients): void {
  destroyDynamoClients(clients);
  clients.sqs.destroy();
  clients.s3.destroy();
}
