import type { Logger } from '../../core/logger.js';
import type { Queues } from '../../core/queues.js';
import { startCommandConsumer, type CommandConsumer } from './consumer.js';
import { startLegacyDrain, type LegacyDrain } from './legacy-drain.js';
import type { CommandHandlers } from './outcome.js';

export interface ShardCommandsDeps {
  queues: Pick<Queues, 'commandQueue' | 'legacyCommandQueue' | 'sendCommand'>;
  handlers: CommandHandlers;
  logger: Logger;
  waitSeconds?: number;
  /** A wake-up on a polled queue said shards were handed to this connector. */
  onShardsHanded?: () => void;
}

/**
 * One command consumer per owned shard, each polling that shard's FIFO queue only: a command
 * reaches the connector that runs its account without bouncing (docs/design.md, Scale-out).
 * The owner of shard 0 also moves what is left in the single queue of a deployment from before
 * shards (legacy-drain.ts).
 */
export class ShardCommands {
  private readonly consumers = new Map<number, CommandConsumer>();
  private legacyDrain: LegacyDrain | undefined;

  constructor(private readonly deps: ShardCommandsDeps) {}

  start(shard: number): void {
    if (this.consumers.has(shard)) return;
    const { queues, handlers, logger, waitSeconds, onShardsHanded } = this.deps;
    this.consumers.set(
      shard,
      startCommandConsumer({
        queues: queues.commandQueue(shard),
        handlers,
        logger: logger.child({ shard }),
        ...(waitSeconds !== undefined ? { waitSeconds } : {}),
        ...(onShardsHanded ? { onShardsHanded } : {}),
      }),
    );
    if (shard === 0 && queues.legacyCommandQueue()) {
      this.legacyDrain = startLegacyDrain({ queues, logger, ...(waitSeconds !== undefined ? { waitSeconds } : {}) });
    }
  }

  /** Stops taking the shard's commands: those not started go back to its queue, those running finish. */
  async stop(shard: number): Promise<void> {
    const consumer = this.consumers.get(shard);
    this.consumers.delete(shard);
    const drain = shard === 0 ? this.legacyDrain : undefined;
    if (drain) this.legacyDrain = undefined;
    await Promise.all([consumer?.stop(), drain?.stop()]);
  }

  stopAll(): Promise<void> {
    return Promise.all([...this.consumers.keys()].map((shard) => this.stop(shard))).then(() => undefined);
  }
}
