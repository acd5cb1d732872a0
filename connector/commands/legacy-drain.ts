import { isQueueMissing } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { Queues } from '../../core/queues.js';

export interface LegacyDrainDeps {
  /** The single queue from before shards, and the send that routes a command to its shard's queue. */
  queues: Pick<Queues, 'legacyCommandQueue' | 'sendCommand'>;
  logger: Logger;
  /** Long-poll seconds of each receive (default 2: the drain ends at stop without a wake-up, so its receives stay short). */
  waitSeconds?: number;
  /**
   * How long the queue must stay empty before the drain ends (default 5 min: longer than a
   * command held by a connector of the old version stays invisible, 120 s).
   */
  idleMs?: number;
}

export interface LegacyDrain {
  /** Resolves with the number of commands forwarded when the drain ends (empty, missing, or stopped). */
  readonly done: Promise<number>;
  stop(): Promise<number>;
}

const DEFAULT_WAIT_SECONDS = 2;
const DEFAULT_IDLE_MS = 5 * 60_000;
/** Long enough to forward a batch of 10 in order; a drain that stops mid-batch lets the rest reappear after it. */
const VISIBILITY_SECONDS = 30;

/**
 * Moves the commands left in the single command queue of a deployment upgraded to shards
 * (docs/design.md, Scale-out) into their shards' queues. The owner of shard 0 runs it, so one
 * connector at a time. Each command is sent to its shard's queue (message group: its account,
 * deduplication id: its command id) and only then deleted, one after the other in the order
 * received: FIFO hands out an account's next command only once the previous one is deleted,
 * so each account's commands keep their order. A command forwarded twice (a crash between send
 * and delete) is dropped by the shard queue's deduplication within 5 minutes, and its outcome
 * record skips it after that.
 */
export function startLegacyDrain(deps: LegacyDrainDeps): LegacyDrain {
  const legacy = deps.queues.legacyCommandQueue();
  const { logger } = deps;
  const idleMs = deps.idleMs ?? DEFAULT_IDLE_MS;
  let running = true;
  let forwarded = 0;

  const done = (async () => {
    if (!legacy) return 0;
    let lastSeen = Date.now();
    while (running && Date.now() - lastSeen < idleMs) {
      try {
        const batch = await legacy.receiveCommands({
          maxMessages: 10,
          waitSeconds: deps.waitSeconds ?? DEFAULT_WAIT_SECONDS,
          visibilityTimeoutSeconds: VISIBILITY_SECONDS,
        });
        if (batch.length > 0) lastSeen = Date.now();
        for (const received of batch) {
          await deps.queues.sendCommand(received.body);
          await legacy.ackCommand(received.receiptHandle);
          forwarded += 1;
          logger.info(
            { commandId: received.body.commandId, accountId: received.body.accountId },
            'command moved from the single queue to its shard',
          );
        }
      } catch (error) {
        if (isQueueMissing(error)) {
          logger.debug('no single command queue from before shards');
          return forwarded;
        }
        // What was not forwarded is visible again after VISIBILITY_SECONDS, still in order.
        logger.error({ err: error }, 'moving commands from the single queue failed');
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
    if (running) logger.info({ forwarded }, 'single command queue from before shards drained; it may be deleted');
    return forwarded;
  })();

  return {
    done,
    stop() {
      running = false;
      return done;
    },
  };
}
