import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLegacyDrain } from '../../../connector/commands/legacy-drain.js';
import { done } from '../../../connector/commands/outcome.js';
import { ShardCommands } from '../../../connector/commands/shard-commands.js';
import { createQueues, toQueueBody, type Queues } from '../../../core/queues.js';
import type { Command } from '../../../core/schemas/command.js';
import { shardOf } from '../../../core/shards.js';
import { handlersFrom } from '../../support/command-handlers.js';
import { silentLogger, startTestStack, type TestStack } from '../../support/test-stack.js';
import { waitFor } from '../../support/wait.js';

/**
 * A deployment upgraded from the single command queue to shards (docs/design.md, Scale-out):
 * what is left in the single queue moves to the shard queues, each account's commands in order.
 */
const SHARDS = 4;

describe('draining the single command queue from before shards', () => {
  let stack: TestStack;
  let queues: Queues;

  beforeAll(async () => {
    stack = await startTestStack({ overrides: { COMMAND_SHARDS: String(SHARDS) } });
    queues = createQueues(stack.config, stack.clients, silentLogger);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const connect = (accountId: string, n: number): Command => ({ type: 'connect', accountId, commandId: `${accountId}-c${n}`, payload: {} });

  /** Receives a shard queue until it is empty, deleting as it goes (FIFO hands out a group's next command only then). */
  async function drainShard(shard: number): Promise<Command[]> {
    const queue = queues.commandQueue(shard);
    const seen: Command[] = [];
    for (;;) {
      const batch = await queue.receiveCommands({ maxMessages: 10, waitSeconds: 0 });
      if (batch.length === 0) return seen;
      for (const received of batch) {
        seen.push(received.body);
        await queue.ackCommand(received.receiptHandle);
      }
    }
  }

  it('no single queue (a deployment that started with shards): the drain ends at once, moving nothing', async () => {
    const drain = startLegacyDrain({ queues, logger: silentLogger, waitSeconds: 0, idleMs: 60_000 });
    expect(await drain.done).toBe(0);
  });

  it('every command left moves to its shard queue, in order per account, and the single queue is emptied', async () => {
    const { sqs } = stack.clients;
    const created = await sqs.send(
      new CreateQueueCommand({
        QueueName: stack.config.COMMAND_QUEUE_NAME,
        Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'false' },
      }),
    );
    const legacyUrl = created.QueueUrl!;
    // Two accounts in different shards, their commands interleaved as the old API queued them.
    const first = 'legacy-a';
    const second = [...Array(50).keys()].map((n) => `legacy-b${n}`).find((id) => shardOf(id, SHARDS) !== shardOf(first, SHARDS))!;
    const sent = [connect(first, 1), connect(second, 1), connect(first, 2), connect(first, 3), connect(second, 2)];
    for (const command of sent) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: legacyUrl,
          MessageBody: toQueueBody(command),
          MessageGroupId: command.accountId,
          MessageDeduplicationId: command.commandId,
        }),
      );
    }

    const drain = startLegacyDrain({ queues, logger: silentLogger, waitSeconds: 0, idleMs: 1_000 });
    expect(await drain.done).toBe(sent.length);

    const ids = (commands: Command[], accountId: string) => commands.filter((c) => c.accountId === accountId).map((c) => c.commandId);
    expect(ids(await drainShard(shardOf(first, SHARDS)), first)).toEqual(['legacy-a-c1', 'legacy-a-c2', 'legacy-a-c3']);
    expect(ids(await drainShard(shardOf(second, SHARDS)), second)).toEqual([`${second}-c1`, `${second}-c2`]);
    const left = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: legacyUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    expect(left.Attributes).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
  });

  it('a connector taking shard 0 drains the single queue beside it: the commands run from their shard queues, in order', async () => {
    const { sqs } = stack.clients;
    const attributes = { FifoQueue: 'true', ContentBasedDeduplication: 'false' };
    const url = (await sqs.send(new CreateQueueCommand({ QueueName: stack.config.COMMAND_QUEUE_NAME, Attributes: attributes }))).QueueUrl!;
    // Account ids as the API accepts them: the consumer drops any other.
    const sent = [connect('movedA', 1), connect('movedB', 1), connect('movedA', 2)];
    for (const command of sent) {
      const body = toQueueBody(command);
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: body,
          MessageGroupId: command.accountId,
          MessageDeduplicationId: command.commandId,
        }),
      );
    }
    const ran: string[] = [];
    const commands = new ShardCommands({
      queues,
      handlers: handlersFrom(async (command) => {
        ran.push(command.commandId);
        return done('recorded');
      }),
      logger: silentLogger,
      waitSeconds: 0,
    });
    for (let shard = 0; shard < SHARDS; shard++) commands.start(shard);
    try {
      await waitFor('the moved commands to run', () => ran.length >= sent.length, { timeoutMs: 30_000 });
    } finally {
      await commands.stopAll();
    }
    expect(ran.filter((id) => id.startsWith('movedA'))).toEqual(['movedA-c1', 'movedA-c2']);
    expect(ran).toContain('movedB-c1');
  });

  it('one shard: the single queue is shard 0’s own; queue URLs given (CDK): only LEGACY_COMMAND_QUEUE_URL names one', async () => {
    const single = createQueues({ ...stack.config, COMMAND_SHARDS: 1 }, stack.clients, silentLogger);
    expect(single.legacyCommandQueue()).toBeUndefined();
    const given = { ...stack.config, COMMAND_QUEUE_URL: await queues.commandQueueUrl() };
    expect(createQueues(given, stack.clients, silentLogger).legacyCommandQueue()).toBeUndefined();
    const named = createQueues(
      { ...given, LEGACY_COMMAND_QUEUE_URL: 'http://127.0.0.1:1/000000000000/old.fifo' },
      stack.clients,
      silentLogger,
    );
    expect(named.legacyCommandQueue()).toBeDefined();
  });
});
