import type { CommandOf } from '../../core/schemas/command.js';
import type { Ownership } from '../ownership/ownership.js';
import type { Pacer } from '../pacing/pacer.js';
import { done, notOurs, type CommandOutcome } from './outcome.js';

/**
 * `send_queued`: a paced account's send joins its queue on this connector and the command is
 * done at once. The send goes in its turn from the pacer's timer (connector/pacing/), so a paced
 * account never holds up the other accounts of its shard's queue (a handler that waited for the
 * turn would hold one of the consumer's few batches in flight).
 */
export function pacingHandlers(deps: { pacer: Pacer; ownership: Pick<Ownership, 'ownedElsewhere'> }) {
  return {
    send_queued: async (command: CommandOf<'send_queued'>): Promise<CommandOutcome> => {
      if (deps.pacer.queued(command.payload)) return done('queued');
      if (await deps.ownership.ownedElsewhere(command.accountId)) return notOurs();
      // Durable in DynamoDB: the account's next session here or elsewhere replays it.
      return done('queued; no session here, its start replays the queue');
    },
  };
}
