import type { CommandOf, CommandType } from '../../core/schemas/command.js';

/**
 * What handling a command came to. `done`: remove it from the queue (it succeeded, failed for
 * good with the failure recorded, or was a duplicate). `retry_later`: put it back, visible again
 * after `delaySeconds` (another connector owns the account, or a transient error).
 */
export type CommandOutcome =
  | { kind: 'done'; note: string }
  | { kind: 'retry_later'; delaySeconds: number; reason: string };

export const done = (note: string): CommandOutcome => ({ kind: 'done', note });
export const retryLater = (delaySeconds: number, reason: string): CommandOutcome => ({
  kind: 'retry_later',
  delaySeconds,
  reason,
});

export type CommandHandler<T extends CommandType> = (command: CommandOf<T>) => Promise<CommandOutcome>;

/** One plain handler per command type. */
export type CommandHandlers = { [T in CommandType]: CommandHandler<T> };
