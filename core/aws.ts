import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Config } from './config.js';

export interface AwsClients {
  dynamo: DynamoDBDocumentClient;
  dynamoRaw: DynamoDBClient;
  sqs: SQSClient;
  s3: S3Client;
}

/**
 * Builds the SDK clients from the config rather than letting each SDK read process.env, so a
 * test or a second stack in the same process can point at its own emulators.
 */
export function createClients(config: Config): AwsClients {
  const credentials =
    config.AWS_ACCESS_KEY_ID && config.AWS_SECRET_ACCESS_KEY
      ? { accessKeyId: config.AWS_ACCESS_KEY_ID, secretAccessKey: config.AWS_SECRET_ACCESS_KEY }
      : undefined;
  const common = { region: config.AWS_REGION, ...(credentials ? { credentials } : {}) };
  const endpointFor = (specific: string | undefined) => specific ?? config.AWS_ENDPOINT_URL;

  const dynamoEndpoint = endpointFor(config.AWS_ENDPOINT_URL_DYNAMODB);
  const sqsEndpoint = endpointFor(config.AWS_ENDPOINT_URL_SQS);
  const s3Endpoint = endpointFor(config.AWS_ENDPOINT_URL_S3);

  const dynamoRaw = new DynamoDBClient({ ...common, ...(dynamoEndpoint ? { endpoint: dynamoEndpoint } : {}) });
  const dynamo = DynamoDBDocumentClient.from(dynamoRaw, {
    marshallOptions: { removeUndefinedValues: true },
  });
  // Emulators answer with queue URLs on hosts like sqs.us-east-1.localhost: keep requests on
  // the configured endpoint instead of following them.
  const sqs = new SQSClient({
    ...common,
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
  for (const client of [dynamoRaw, sqs, s3]) withoutSdkLogging(client);
  return { dynamo, dynamoRaw, sqs, s3 };
}

/**
 * Drops the SDK's logger middleware. No logger is configured (the SDK's is a no-op), yet that
 * middleware runs the sensitive-data filter over every response before handing it to the no-op:
 * a walk of each item of a Query (~4% of the CPU of listing 1,000 accounts, bench:api).
 */
function withoutSdkLogging(client: { middlewareStack: { remove(name: string): boolean } }): void {
  client.middlewareStack.remove('loggerMiddleware');
}

export function destroyClients(clients: AwsClients): void {
  clients.dynamo.destroy();
  clients.dynamoRaw.destroy();
  clients.sqs.destroy();
  clients.s3.destroy();
}
