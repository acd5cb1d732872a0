import type { Logger } from '../../core/logger.js';
import type { Queues, Received } from '../../core/queues.js';
import type { Command } from '../../core/schemas/command.js';
import { isValidAccountId } from '../../core/jid.js';
import { MAX_RECEIVE_COUNT } from '../../core/resources.js';
import type { CommandHandler, CommandHandlers, CommandOutcome } from './outcome.js';
import { retryLater } from './outcome.js';

export interface ConsumerDeps {
  queues: Pick<Queues, 'receiveCommands' | 'ackCommand' | 'changeCommandVisibility' | 'sendCommand'>;
  handlers: CommandHandlers;
  logger: Logger;
  /** Long-poll seconds per receive; stop() may wait this long (shorter in tests). */
  waitSeconds?: number;
}

export interface CommandConsumer {
  /** Stops receiving, lets commands in flight finish, then resolves. */
  stop(): Promise<void>;
}

/** Retry delay after a handler threw: the redrive policy sends a command that keeps failing to the DLQ. */
const ERROR_RETRY_SECONDS = 5;
/** Received batches handled at once (each up to 10 commands of different accounts). */
const MAX_BATCHES_IN_FLIGHT = 5;
/** Seconds before a command for an account another connector runs is visible again (for it). */
const HAND_BACK_SECONDS = 2;
/** Visibility while a command runs: longer than any send (uploads, conversions) may take. */
const IN_FLIGHT_VISIBILITY_SECONDS = 120;

function dispatch(handlers: CommandHandlers, command: Command): Promise<CommandOutcome> {
  // The map is keyed by the same literal as the union, so the handler fits its command.
  const handler = handlers[command.type] as CommandHandler<typeof command.type>;
  return handler(command as never);
}

/**
 * Long-polls the command queue and runs each command through the handler of its type. Commands
 * of one account (one FIFO message group) run one after another in queue order; different
 * accounts run in parallel.
 */
export function startCommandConsumer(deps: ConsumerDeps): CommandConsumer {
  const { queues, handlers, logger } = deps;
  let running = true;

  async function handle(received: Received<Command>): Promise<void> {
    const command = received.body;
    const log = logger.child({ accountId: command.accountId, commandId: command.commandId, command: command.type });
    let outcome: CommandOutcome;
    if (!isValidAccountId(command.accountId)) {
      log.error('command with an invalid account id dropped');
      outcome = { kind: 'done', note: 'invalid account id' };
    } else {
      try {
        outcome = await dispatch(handlers, command);
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
    const byAccount = new Map<string, Received<Command>[]>();
    for (const received of batch) {
      const group = byAccount.get(received.body.accountId) ?? [];
      group.push(received);
      byAccount.set(received.body.accountId, group);
    }
    await Promise.all(
      [...byAccount.values()].map(async (group) => {
        for (const received of group) {
          await handle(received).catch((error: unknown) =>
            logger.error({ err: error, commandId: received.body.commandId }, 'settling a command with the queue failed'),
          );
        }
      }),
    );
  }

  /** Commands received while stopping go straight back to the queue for the next connector. */
  async function handBack(batch: Received<Command>[]): Promise<void> {
    await Promise.all(
      batch.map((received) =>
        queues.changeCommandVisibility(received.receiptHandle, 0).catch((error: unknown) =>
          logger.error({ err: error, commandId: received.body.commandId }, 'handing a command back failed'),
        ),
      ),
    );
  }

  // Batches run while the next receive is already waiting: a FIFO queue does not hand out a
  // group's next command while one of the group is in flight, so an account's order holds and
  // a slow send (media conversion) does not hold up other accounts.
  const inFlight = new Set<Promise<void>>();
  let freed: (() => void) | undefined;
  const track = (work: Promise<void>) => {
    inFlight.add(work);
    void work.finally(() => {
      inFlight.delete(work);
      freed?.();
    });
  };

  const loop = (async () => {
    while (running) {
      try {
        while (inFlight.size >= MAX_BATCHES_IN_FLIGHT) {
          await new Promise<void>((resolve) => (freed = resolve));
        }
        const batch = await queues.receiveCommands({
          maxMessages: 10,
          waitSeconds: deps.waitSeconds ?? 10,
          visibilityTimeoutSeconds: IN_FLIGHT_VISIBILITY_SECONDS,
        });
        if (!running) {
          await handBack(batch);
          break;
        }
        if (batch.length > 0) track(handleBatch(batch));
      } catch (error) {
        if (!running) break;
        logger.error({ err: error }, 'receiving commands failed');
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  })();

  return {
    async stop() {
      // The long poll is not aborted: SQS may still hand a message to an abandoned request,
      // which would hide it for the whole visibility timeout. It ends within `waitSeconds`.
      running = false;
      await loop;
      await Promise.all(inFlight);
    },
  };
}
