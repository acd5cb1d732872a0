import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import { startFauxqs } from 'fauxqs';
import { closeWhenIdle } from './request-drain.js';
import { addMultipartAbortAndList } from './s3rver-multipart.js';

/**
 * The embedded AWS: dynalite (DynamoDB), s3rver (S3) and fauxqs (SQS), in this process, on free
 * loopback ports. With a `dataDir` all three keep their state on disk under it (LevelDB, files,
 * SQLite), so a restart finds accounts, messages, media and queued commands where they were;
 * without one they use a temporary directory removed on stop.
 *
 * fauxqs' startFauxqs always binds 0.0.0.0 (its listen host is not configurable); clients still
 * reach it through 127.0.0.1.
 */
export interface EmulatorOptions {
  dataDir?: string;
  host?: '127.0.0.1';
}

export interface Emulators {
  endpoints: { dynamodb: string; sqs: string; s3: string };
  /** AWS_ENDPOINT_URL_* + AWS_REGION + dummy credentials, ready to merge into an env for loadConfig. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

const EMULATOR_REGION = 'us-east-1';
// s3rver accepts only this key pair; dynalite and fauxqs accept any.
const DUMMY_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
/** Requests in flight at a stop get this long to be answered before their connections are cut. */
const IN_FLIGHT_LIMIT_MS = 10_000;

export async function startEmulators(options: EmulatorOptions = {}): Promise<Emulators> {
  const host = options.host ?? '127.0.0.1';
  const temporary = options.dataDir === undefined;
  const root = options.dataDir ? resolve(options.dataDir) : await mkdtemp(join(tmpdir(), 'wa-gateway-emulators-'));
  const dirs = { dynamodb: join(root, 'dynamodb'), s3: join(root, 's3'), sqs: join(root, 'sqs') };
  await Promise.all(Object.values(dirs).map((dir) => mkdir(dir, { recursive: true })));

  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    // Reverse order, each independently: one failing stop must not leave the others running.
    const results = await Promise.allSettled(stops.reverse().map((stop) => stop()));
    if (temporary) await rm(root, { recursive: true, force: true });
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  };

  try {
    const dynamo = dynalite({ path: dirs.dynamodb, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
    const dynamoPort = await listen(dynamo, host);
    stops.push(closeWhenIdle(dynamo, IN_FLIGHT_LIMIT_MS));

    const s3 = new S3rver({
      address: host,
      port: 0,
      directory: dirs.s3,
      silent: true,
      vhostBuckets: false,
      // Streamed uploads of unknown length are signed in ways s3rver does not recompute.
      allowMismatchedSignatures: true,
    });
    addMultipartAbortAndList(s3);
    const s3Address = await s3.run();
    stops.push(() => s3.close());

    const sqs = await startFauxqs({ port: 0, logger: false, dataDir: dirs.sqs });
    stops.push(() => sqs.stop());

    const endpoints = {
      dynamodb: `http://${host}:${dynamoPort}`,
      s3: `http://${host}:${s3Address.port}`,
      sqs: `http://${host}:${sqs.port}`,
    };
    return {
      endpoints,
      env: {
        AWS_REGION: EMULATOR_REGION,
        ...DUMMY_CREDENTIALS,
        AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
        AWS_ENDPOINT_URL_S3: endpoints.s3,
        AWS_ENDPOINT_URL_SQS: endpoints.sqs,
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll().catch(() => undefined);
    throw error;
  }
}

function listen(server: Server, host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolvePort((server.address() as AddressInfo).port);
    });
  });
}
