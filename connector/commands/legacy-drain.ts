import { isQueueMissing } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { startPollLoop } from '../../core/poll-loop.js';
import type { Queues, Received } from '../../core/queues.js';
import type { Command } from '../../core/schemas/command.js';

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
/** Pause after a failed receive or forward before polling again. */
const ERROR_PAUSE_MS = 1_000;

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
  if (!legacy) {
    const done = Promise.resolve(0);
    return { done, stop: () => done };
  }
  const { logger } = deps;
  const idleMs = deps.idleMs ?? DEFAULT_IDLE_MS;
  let forwarded = 0;
  let lastSeen = Date.now();

  const forward = async (batch: Received<Command>[]): Promise<void> => {
    lastSeen = Date.now();
    for (const received of batch) {
      await deps.queues.sendCommand(received.body);
      await legacy.ackCommand(received.receiptHandle);
      forwarded += 1;
      logger.info(
        { commandId: received.body.commandId, accountId: received.body.accountId },
        'command moved from the single queue to its shard',
      );
    }
  };

  const loop = startPollLoop({
    receive: (request) => legacy.receiveCommands(request),
    waitSeconds: deps.waitSeconds ?? DEFAULT_WAIT_SECONDS,
    visibilitySeconds: VISIBILITY_SECONDS,
    // One batch at a time, its commands one after the other: the order of each account holds.
    batchesAtOnce: 1,
    handleBatch: forward,
    // Forwarded all the same: the receive was short, and the next owner of shard 0 would otherwise wait VISIBILITY_SECONDS for them.
    receivedWhileStopping: forward,
    pollWhile: () => Date.now() - lastSeen < idleMs,
    failed(error) {
      if (isQueueMissing(error)) {
        logger.debug('no single command queue from before shards');
        return 'end';
      }
      // What was not forwarded is visible again after VISIBILITY_SECONDS, still in order.
      logger.error({ err: error }, 'moving commands from the single queue failed');
      return 'back_off';
    },
    backOffMs: ERROR_PAUSE_MS,
  });

  const done = loop.ended.then((end) => {
    if (end === 'finished') logger.info({ forwarded }, 'single command queue from before shards drained; it may be deleted');
    return forwarded;
  });
  return {
    done,
    async stop() {
      await loop.stop();
      return done;
    },
  };
}
