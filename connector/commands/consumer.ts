import type { Logger } from '../../core/logger.js';
import type { Queues, Received } from '../../core/queues.js';
import type { Command } from '../../core/schemas/command.js';
import { isValidAccountId } from '../../core/jid.js';
import { startPollLoop } from '../../core/poll-loop.js';
import { MAX_RECEIVE_COUNT } from '../../core/resources.js';
import { startVisibilityHeartbeat } from '../../core/visibility-heartbeat.js';
import { withTimeout } from '../../core/with-timeout.js';
import type { CommandHandlers, CommandOutcome } from './outcome.js';
import { retryLater, runCommand } from './outcome.js';

export interface ConsumerDeps {
  queues: Pick<
    Queues,
    'receiveCommands' | 'ackCommand' | 'changeCommandVisibility' | 'changeCommandVisibilities' | 'sendCommand' | 'wakeReceivers'
  >;
  handlers: CommandHandlers;
  logger: Logger;
  /** Long-poll seconds per receive (default 20; stop() ends the receive out with a wake-up). */
  waitSeconds?: number;
  /** How long stop() lets commands already running finish (default 6 s). */
  drainMs?: number;
  /** A wake-up on this queue said shards were handed to this connector (shard-balancer.ts `wake`). */
  onShardsHanded?: () => void;
}

export interface CommandConsumer {
  /**
   * Stops receiving, hands the commands received but not started back to the queue at once,
   * lets the running ones finish within `drainMs`, then resolves.
   */
  stop(): Promise<void>;
}

/** Retry delay after a handler threw: the redrive policy sends a command that keeps failing to the DLQ. */
const ERROR_RETRY_SECONDS = 5;
/** Received batches handled at once (each up to 10 commands of different accounts). */
const MAX_BATCHES_IN_FLIGHT = 5;
/** Seconds before a command for an account another connector runs is visible again (for it). */
const HAND_BACK_SECONDS = 2;
/**
 * Receive long-poll seconds: SQS's longest, so an idle shard costs one receive per 20 s (it was
 * 2 s: 16 receives a second for an idle connector's 32 shards). A receive out is never simply
 * abandoned: SQS (and fauxqs) may still hand a message to an aborted request, hiding it for its
 * visibility and holding up its account's later commands. stop() queues a wake-up on the shard's
 * queue instead, which ends the receive at once (core/queues.ts `wakeReceivers`, core/poll-loop.ts).
 */
const RECEIVE_WAIT_SECONDS = 20;
/**
 * How long stop() waits for the receive out after its wake-up. Past it (the wake-up could not be
 * sent, SQS is slow) the receive is aborted: a command SQS may still hand to it is visible again
 * after HELD_VISIBILITY_SECONDS.
 */
const WAKE_UP_GRACE_MS = 3_000;
/**
 * Visibility of a held command, renewed every HEARTBEAT_MS while it waits or runs: a command
 * of a connector that died is visible again within this many seconds, however long a send
 * (upload, conversion) takes. The margin between the two absorbs a busy event loop.
 */
const HELD_VISIBILITY_SECONDS = 10;
const HEARTBEAT_MS = 3_000;
const DEFAULT_DRAIN_MS = 6_000;
/** Pause after a failed receive (queue unreachable) before polling again. */
const RECEIVE_ERROR_PAUSE_MS = 1_000;

/**
 * Long-polls the command queue and runs each command through the handler of its type. Commands
 * of one account (one FIFO message group) run one after another in queue order; different
 * accounts run in parallel.
 */
export function startCommandConsumer(deps: ConsumerDeps): CommandConsumer {
  const { handlers, logger } = deps;
  const heartbeat = startVisibilityHeartbeat({
    extend: (handles, seconds) => deps.queues.changeCommandVisibilities(handles, seconds),
    visibilitySeconds: HELD_VISIBILITY_SECONDS,
    everyMs: HEARTBEAT_MS,
    logger,
  });
  // Disposing of a command (ack or release) ends its heartbeat first, so that no late extension undoes a hand-back.
  const queues: ConsumerDeps['queues'] = {
    ...deps.queues,
    async ackCommand(receiptHandle) {
      await heartbeat.release(receiptHandle);
      await deps.queues.ackCommand(receiptHandle);
    },
    async changeCommandVisibility(receiptHandle, seconds) {
      await heartbeat.release(receiptHandle);
      await deps.queues.changeCommandVisibility(receiptHandle, seconds);
    },
  };
  /** Received and not started, by receipt handle: what stop() hands back at once. */
  const waiting = new Map<string, Received<Command>>();

  async function handle(received: Received<Command>): Promise<void> {
    const command = received.body;
    const log = logger.child({ accountId: command.accountId, commandId: command.commandId, command: command.type });
    let outcome: CommandOutcome;
    if (!isValidAccountId(command.accountId)) {
      log.error('command with an invalid account id dropped');
      outcome = { kind: 'done', note: 'invalid account id' };
    } else {
      try {
        outcome = await runCommand(handlers, command);
      } catch (error) {
        log.error({ err: error }, 'command failed');
        outcome = retryLater(ERROR_RETRY_SECONDS, error instanceof Error ? error.message : String(error));
      }
    }
    switch (outcome.kind) {
      case 'done':
        log.info({ note: outcome.note }, 'command done');
        await queues.ackCommand(received.receiptHandle);
        return;
      case 'retry_later':
        log.info({ reason: outcome.reason, delaySeconds: outcome.delaySeconds }, 'command returned to the queue');
        await queues.changeCommandVisibility(received.receiptHandle, outcome.delaySeconds);
        return;
      case 'not_ours':
        if (received.receiveCount >= MAX_RECEIVE_COUNT - 1) {
          // Handing it back once more could move it to the dead-letter queue although its owner
          // is alive and would run it: queue a copy (new deduplication id) and drop this one.
          // The copy goes behind commands of the account already queued, a rare reordering.
          log.info('command re-queued for the connector that runs the account');
          await queues.sendCommand({ ...command, commandId: `${command.commandId}.${received.receiveCount}` });
          await queues.ackCommand(received.receiptHandle);
          return;
        }
        log.debug('command handed back to the connector that runs the account');
        await queues.changeCommandVisibility(received.receiptHandle, HAND_BACK_SECONDS);
        return;
    }
  }

  async function handleBatch(batch: Received<Command>[]): Promise<void> {
    for (const received of batch) {
      heartbeat.hold(received.receiptHandle);
      waiting.set(received.receiptHandle, received);
    }
    const byAccount = new Map<string, Received<Command>[]>();
    for (const received of batch) {
      const group = byAccount.get(received.body.accountId) ?? [];
      group.push(received);
      byAccount.set(received.body.accountId, group);
    }
    await Promise.all(
      [...byAccount.values()].map(async (group) => {
        for (const received of group) {
          // Gone from `waiting`: stop() handed it back, and the rest of its group with it.
          if (!waiting.delete(received.receiptHandle)) return;
          await handle(received)
            .catch((error: unknown) =>
              logger.error({ err: error, commandId: received.body.commandId }, 'settling a command with the queue failed'),
            )
            // Disposed of or not, it is no longer ours to keep invisible.
            .finally(() => void heartbeat.release(received.receiptHandle));
        }
      }),
    );
  }

  /** Commands received but not started go straight back to the queue for the next connector. */
  async function handBack(batch: Received<Command>[]): Promise<void> {
    if (batch.length === 0) return;
    const handles = batch.map((received) => received.receiptHandle);
    await Promise.all(handles.map((handle) => heartbeat.release(handle)));
    // 0 would do; the queues module makes it 1 s (a fauxqs quirk, see core/queues.ts).
    const refused = await deps.queues.changeCommandVisibilities(handles, 0).catch((error: unknown) => {
      logger.error({ err: error }, 'handing commands back failed');
      return handles;
    });
    logger.info({ commands: batch.length, refused: refused.length }, 'commands not started handed back to the queue');
  }

  const loop = startPollLoop({
    receive: (request) => deps.queues.receiveCommands(deps.onShardsHanded ? { ...request, onShardsHanded: deps.onShardsHanded } : request),
    waitSeconds: deps.waitSeconds ?? RECEIVE_WAIT_SECONDS,
    visibilitySeconds: HELD_VISIBILITY_SECONDS,
    // Batches run while the next receive is already waiting: a FIFO queue does not hand out a
    // group's next command while one of the group is in flight, so an account's order holds and
    // a slow send (media conversion) does not hold up other accounts.
    batchesAtOnce: MAX_BATCHES_IN_FLIGHT,
    handleBatch,
    receivedWhileStopping: handBack,
    failed(error) {
      logger.error({ err: error }, 'receiving commands failed');
      return 'back_off';
    },
    backOffMs: RECEIVE_ERROR_PAUSE_MS,
    wakeUp: { wakeReceivers: () => deps.queues.wakeReceivers(), graceMs: WAKE_UP_GRACE_MS, logger },
  });

  return {
    async stop() {
      const drainUntil = Date.now() + (deps.drainMs ?? DEFAULT_DRAIN_MS);
      await loop.stop();
      const notStarted = [...waiting.values()];
      waiting.clear();
      await handBack(notStarted);
      const allDone = loop.workDone();
      if ((await withTimeout(allDone, drainUntil - Date.now())) !== 'timed_out') {
        heartbeat.stop();
        return;
      }
      // Still running: their heartbeat goes on while this process lives, so nobody runs them
      // twice; once it is gone they are visible again within HELD_VISIBILITY_SECONDS.
      logger.warn({ running: heartbeat.size }, 'commands still running at the end of the stop drain');
      void allDone.finally(() => heartbeat.stop());
    },
  };
}
