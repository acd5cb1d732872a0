import { createHash } from 'node:crypto';

/**
 * Accounts hash to a fixed number of shards (COMMAND_SHARDS). A shard is the unit of ownership
 * (one connector holds its lease, docs/design.md "Scale-out") and of command routing (one FIFO
 * command queue per shard, polled by its owner only). The hash is the same in the API and the
 * connector, so a command lands in the queue its account's owner reads.
 */
export function shardOf(accountId: string, shardCount: number): number {
  if (shardCount <= 1) return 0;
  return createHash('sha1').update(accountId).digest().readUInt32BE(0) % shardCount;
}

/**
 * The command queue of a shard: the configured name itself with one shard (the single-queue
 * set-up), `<name>-<shard>.fifo` with several.
 */
export function shardQueueName(baseName: string, shard: number, shardCount: number): string {
  if (shardCount <= 1) return baseName;
  return `${baseName.replace(/\.fifo$/, '')}-${shard}.fifo`;
}

/** A shard queue's URL from the configured base URL: its last path segment is the base name. */
export function shardQueueUrl(baseUrl: string, shard: number, shardCount: number): string {
  const slash = baseUrl.lastIndexOf('/');
  return `${baseUrl.slice(0, slash + 1)}${shardQueueName(baseUrl.slice(slash + 1), shard, shardCount)}`;
}
