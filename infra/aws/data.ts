import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY } from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { ACCOUNT_OBJECTS_PREFIX, GSI1 } from '../../core/keys.js';

/** Key and index names of core/ (see core/keys.ts and core/resources.ts): keep them in step. */
export const tableSchema = {
  partitionKey: 'pk',
  sortKey: 'sk',
  index: { name: GSI1, partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  timeToLiveAttribute: 'expiresAt',
} as const;

/** Object key prefixes of core/media-store.ts: `accounts/<accountId>/{media,uploads}/<id>`. */
export const mediaKeyPatterns = {
  everything: 'accounts/*',
  media: 'accounts/*/media/*',
  uploads: 'accounts/*/uploads/*',
  listPrefix: 'accounts/',
} as const;

export interface GatewayDataProps {
  readonly existingTableName?: string;
  readonly existingBucketName?: string;
  readonly retainData: boolean;
  /** Media objects (and uploads a send left) expire this many days after they were stored; unset: kept. */
  readonly mediaRetentionDays?: number | undefined;
}

/** How long the media bucket's server access logs are kept. */
const ACCESS_LOG_RETENTION = Duration.days(90);

/**
 * The single DynamoDB table and the media bucket: created here, or existing ones by name. A
 * created media bucket writes its server access logs (who read, wrote or deleted which object)
 * to a log bucket of its own.
 */
export class GatewayData extends Construct {
  readonly table: dynamodb.ITable;
  readonly bucket: s3.IBucket;
  /** Receives the media bucket's server access logs under `media/`; none for an existing bucket. */
  readonly accessLogBucket?: s3.Bucket;

  constructor(scope: Construct, id: string, props: GatewayDataProps) {
    super(scope, id);
    // S3 delivers access logs under a bucket policy (this account, the media bucket only) instead
    // of an ACL, which BUCKET_OWNER_ENFORCED buckets refuse; set before any bucket is created.
    this.node.setContext(S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);
    const removalPolicy = props.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    this.table = props.existingTableName
      ? dynamodb.Table.fromTableAttributes(this, 'Table', {
          tableName: props.existingTableName,
          // Declaring the index makes grants cover `<table>/index/gsi1` as well.
          globalIndexes: [tableSchema.index.name],
        })
      : createTable(this, removalPolicy);

    if (props.existingBucketName) {
      this.bucket = s3.Bucket.fromBucketName(this, 'MediaBucket', props.existingBucketName);
    } else {
      this.accessLogBucket = createAccessLogBucket(this, removalPolicy, !props.retainData);
      this.bucket = createBucket(this, removalPolicy, !props.retainData, this.accessLogBucket, props.mediaRetentionDays);
    }
  }
}

function createTable(scope: Construct, removalPolicy: RemovalPolicy): dynamodb.Table {
  const table = new dynamodb.Table(scope, 'Table', {
    partitionKey: { name: tableSchema.partitionKey, type: dynamodb.AttributeType.STRING },
    sortKey: { name: tableSchema.sortKey, type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    timeToLiveAttribute: tableSchema.timeToLiveAttribute,
    // Encrypted at rest with an AWS-owned key: free, no KMS permissions or request charges.
    encryption: dynamodb.TableEncryption.DEFAULT,
    removalPolicy,
  });
  table.addGlobalSecondaryIndex({
    indexName: tableSchema.index.name,
    partitionKey: { name: tableSchema.index.partitionKey, type: dynamodb.AttributeType.STRING },
    sortKey: { name: tableSchema.index.sortKey, type: dynamodb.AttributeType.STRING },
    projectionType: dynamodb.ProjectionType.ALL,
  });
  return table;
}

function createBucket(
  scope: Construct,
  removalPolicy: RemovalPolicy,
  autoDeleteObjects: boolean,
  accessLogs: s3.Bucket,
  mediaRetentionDays: number | undefined,
): s3.Bucket {
  return new s3.Bucket(scope, 'MediaBucket', {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    lifecycleRules: [
      // Uploads cut short (a client gone mid-request, a crashed connector) otherwise bill forever.
      { id: 'abort-incomplete-multipart-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      // Everything under `accounts/` is media or an upload: MEDIA_RETENTION_DAYS, as the
      // connector and the API read it (the emulators' sweep applies the same rule locally).
      ...(mediaRetentionDays === undefined
        ? []
        : [{ id: 'expire-media', prefix: ACCOUNT_OBJECTS_PREFIX, expiration: Duration.days(mediaRetentionDays) }]),
    ],
    serverAccessLogsBucket: accessLogs,
    serverAccessLogsPrefix: 'media/',
    removalPolicy,
    autoDeleteObjects,
  });
}

/**
 * The media bucket's server access logs: S3 writes them at no charge, storage is billed as any
 * object's (docs/deploy-aws.md, Cost), and they expire after ACCESS_LOG_RETENTION. SSE-S3, as S3
 * log delivery requires; kept or deleted with the stack as the data they describe.
 */
function createAccessLogBucket(scope: Construct, removalPolicy: RemovalPolicy, autoDeleteObjects: boolean): s3.Bucket {
  return new s3.Bucket(scope, 'AccessLogBucket', {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    lifecycleRules: [{ id: 'expire-access-logs', expiration: ACCESS_LOG_RETENTION }],
    removalPolicy,
    autoDeleteObjects,
  });
}
