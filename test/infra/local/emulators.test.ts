import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { createClients, destroyClients, type AwsClients } from '../../../core/aws.js';
import { loadConfig, type Config } from '../../../core/config.js';
import { newCommandId } from '../../../core/ids.js';
import { getBuffer, mediaStoreOf, putStream, type MediaStore } from '../../../core/media-store.js';
import { shardOf } from '../../../core/shards.js';
import { createQueues, type Queues } from '../../../core/queues.js';
import { ensureResources } from '../../../core/resources.js';
import { createAccount, getAccount } from '../../../core/store/accounts.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { startEmulators } from '../../../infra/local/emulators.js';
import { silentLogger } from '../../support/test-stack.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

interface Deps {
  table: Table;
  media: MediaStore;
  queues: Queues;
}

async function withStack<T>(dataDir: string, run: (deps: Deps) => Promise<T>): Promise<T> {
  const emulators = await startEmulators({ dataDir });
  const config = loadConfig({ ...emulators.env, LOG_LEVEL: 'silent' });
  const clients = createClients(config);
  try {
    await ensureResources(config, clients, silentLogger);
    return await run(deps(config, clients));
  } finally {
    destroyClients(clients);
    await emulators.stop();
  }
}
const deps = (config: Config, clients: AwsClients): Deps => ({
  table: tableOf(config, clients),
  media: mediaStoreOf(config, clients),
  queues: createQueues(config, clients, silentLogger),
});

describe('startEmulators', () => {
  it('keeps items, objects and queued commands in dataDir across a restart on new ports', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'wa-emu-'));
    dirs.push(dataDir);
    const commandId = newCommandId();
    await withStack(dataDir, async ({ table, media, queues }) => {
      await createAccount(table, { id: 'persist1', collectionName: 'auth_persist1', status: 'connecting' });
      await putStream(media, 'accounts/persist1/media/m', Buffer.from('bytes'), { contentType: 'image/png' });
      await queues.sendCommand({ type: 'connect', accountId: 'persist1', commandId, payload: {} });
    });
    await withStack(dataDir, async ({ table, media, queues }) => {
      expect(await getAccount(table, 'persist1')).toMatchObject({ _id: 'persist1', status: 'connecting' });
      expect((await getBuffer(media, 'accounts/persist1/media/m'))?.toString()).toBe('bytes');
      // In the queue of its account's shard (the default config has several).
      const [command] = await queues.commandQueue(shardOf('persist1', loadConfig({}).COMMAND_SHARDS)).receiveCommands({ waitSeconds: 2 });
      expect(command?.body.commandId).toBe(commandId);
    });
  });

  it('ensureResources is idempotent and a temp stack leaves no data behind', async () => {
    const emulators = await startEmulators();
    const config = loadConfig({ ...emulators.env, LOG_LEVEL: 'silent' });
    const clients = createClients(config);
    try {
      await ensureResources(config, clients, silentLogger);
      await ensureResources(config, clients, silentLogger);
      expect(Object.keys(emulators.endpoints).sort()).toEqual(['dynamodb', 's3', 'sqs']);
      for (const url of Object.values(emulators.endpoints)) expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      destroyClients(clients);
      await emulators.stop();
    }
  });

  it('S3 lists unfinished multipart uploads and aborts one, its parts gone (as S3 does; s3rver alone cannot)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'wa-emu-'));
    dirs.push(dataDir);
    await withStack(dataDir, async ({ media }) => {
      const key = 'accounts/mpu1/uploads/u1';
      const created = await media.s3.send(new CreateMultipartUploadCommand({ Bucket: media.bucket, Key: key }));
      await media.s3.send(
        new UploadPartCommand({ Bucket: media.bucket, Key: key, UploadId: created.UploadId, PartNumber: 1, Body: Buffer.alloc(1024, 1) }),
      );
      const listed = await media.s3.send(new ListMultipartUploadsCommand({ Bucket: media.bucket }));
      expect(listed.Uploads?.map((u) => [u.Key, u.UploadId])).toEqual([[key, created.UploadId]]);

      await media.s3.send(new AbortMultipartUploadCommand({ Bucket: media.bucket, Key: key, UploadId: created.UploadId }));
      expect((await media.s3.send(new ListMultipartUploadsCommand({ Bucket: media.bucket }))).Uploads ?? []).toEqual([]);
      expect(await readdir(join(dataDir, 's3', media.bucket, '._S3rver_uploads'))).toEqual([]);
    });
  });
});
