import type { Command, CommandOf, CommandType } from '../../core/schemas/command.js';

/**
 * What handling a command came to. `done`: remove it from the queue (it succeeded, failed for
 * good with the failure recorded, or was a duplicate). `retry_later`: put it back, visible again
 * after `delaySeconds` (a transient error; repeated failures end in the dead-letter queue).
 * `not_ours`: another connector runs the account; the command goes back for it.
 */
export type CommandOutcome =
  | { kind: 'done'; note: string }
  | { kind: 'retry_later'; delaySeconds: number; reason: string }
  | { kind: 'not_ours' };

export const done = (note: string): CommandOutcome => ({ kind: 'done', note });
export const retryLater = (delaySeconds: number, reason: string): CommandOutcome => ({
  kind: 'retry_later',
  delaySeconds,
  reason,
});

export const notOurs = (): CommandOutcome => ({ kind: 'not_ours' });

type CommandHandler<T extends CommandType> = (command: CommandOf<T>) => Promise<CommandOutcome>;

/** One plain handler per command type. */
export type CommandHandlers = { [T in CommandType]: CommandHandler<T> };

/** The command through the handler of its type. */
export function runCommand(handlers: CommandHandlers, command: Command): Promise<CommandOutcome> {
  // The map is keyed by the same literal as the union, so the handler fits its command.
  const handler = handlers[command.type] as CommandHandler<typeof command.type>;
  return handler(command as never);
}
