import type { Logger } from '../../core/logger.js';
import { deleteAccountData } from '../../core/store/account-deletion.js';
import type { MediaStore } from '../../core/media-store.js';
import type { Table } from '../../core/store/table.js';
import type { CommandOf } from '../../core/schemas/command.js';
import type { Ownership } from '../ownership/ownership.js';
import type { SessionRegistry } from '../session/session-registry.js';
import { done, notOurs, type CommandOutcome } from './outcome.js';

export interface LifecycleDeps {
  table: Table;
  mediaStore: MediaStore;
  registry: SessionRegistry;
  ownership: Ownership;
  logger: Logger;
}

export function lifecycleHandlers(deps: LifecycleDeps) {
  const { registry, ownership } = deps;

  /** True when the account runs on another connector, so the command is theirs to execute. */
  const belongsElsewhere = async (accountId: string) => !registry.get(accountId) && (await ownership.ownedElsewhere(accountId));

  return {
    async connect(command: CommandOf<'connect'>): Promise<CommandOutcome> {
      const outcome = await registry.start(command.accountId, 'connect');
      switch (outcome) {
        case 'started':
          return done('session started');
        case 'already_running':
          await registry.get(command.accountId)?.republishStatus();
          return done('session already running');
        case 'owned_elsewhere':
          return notOurs();
        case 'account_not_found':
          return done('account does not exist');
      }
    },

    async disconnect(command: CommandOf<'disconnect'>): Promise<CommandOutcome> {
      if (await belongsElsewhere(command.accountId)) {
        return notOurs();
      }
      await registry.stop(command.accountId, 'not_started');
      return done('session closed');
    },

    /**
     * Settings take effect without a restart. The API sends this command after each change,
     * and the session here reads the account again (one GetItem per change). The other ways a
     * running session could learn of a change cost requests while nothing changes: reading the
     * account on every message or call, or polling it, is a read per account per period for
     * thousands of idle accounts; the command costs one SQS message and one read per change,
     * nothing otherwise, and reaches the connector that runs the account like any other
     * command of it (its FIFO group, its shard). The settings are not in the command itself:
     * the proxy's password stays out of the queue, and two changes racing cannot leave the
     * older one applied.
     */
    async settings_changed(command: CommandOf<'settings_changed'>): Promise<CommandOutcome> {
      const found = await registry.refreshSettings(command.accountId);
      switch (found) {
        case 'applied':
          return done('settings applied');
        case 'account_not_found':
          return done('account does not exist');
        case 'no_session':
          // A session started later reads the settings as it starts.
          return (await belongsElsewhere(command.accountId)) ? notOurs() : done('no session here');
      }
    },

    async delete_account(command: CommandOf<'delete_account'>): Promise<CommandOutcome> {
      if (await belongsElsewhere(command.accountId)) {
        return notOurs();
      }
      await registry.end(command.accountId);
      const counts = await deleteAccountData(deps.table, deps.mediaStore, command.accountId, command.payload.collectionName);
      deps.logger.info({ accountId: command.accountId, ...counts }, 'account data deleted');
      return done('account deleted');
    },
  };
}
