import type { Logger } from '../../core/logger.js';
import type { CommandOf } from '../../core/schemas/command.js';
import { markPairingCodeIssued, markPairingCodeRefused, pairingCodeRequests } from '../../core/store/pairing-codes.js';
import type { Table } from '../../core/store/table.js';
import type { Ownership } from '../ownership/ownership.js';
import type { SessionRegistry } from '../session/session-registry.js';
import { reasonOf, runLiveCommand } from './live-commands.js';
import { done, notOurs, type CommandOutcome } from './outcome.js';

export interface PairingDeps {
  table: Table;
  registry: SessionRegistry;
  ownership: Ownership;
  logger: Logger;
}

const PAIRING_CODE_COMMAND = {
  records: pairingCodeRequests,
  noRecord: 'no request record',
  late: 'the connector took the request after its deadline',
  failedLog: 'no pairing code',
  notClaimed: 'not claimed',
};

/**
 * `request_pairing_code`: like a send, it runs only while its request record is `pending` and
 * before its deadline (live-commands.ts). The account's session is started when it is not
 * running (as `connect` does); once its socket waits for a link, the record is claimed and
 * WhatsApp is asked for the code, which finishes the record the API is waiting on.
 */
export function pairingHandlers(deps: PairingDeps) {
  const { table, registry } = deps;

  return {
    request_pairing_code(command: CommandOf<'request_pairing_code'>): Promise<CommandOutcome> {
      const { accountId, commandId } = command;
      const log = deps.logger.child({ accountId, commandId, command: command.type });
      return runLiveCommand({ table, log, accountId, id: commandId }, PAIRING_CODE_COMMAND, {
        prepare: async ({ remaining, fail }) => {
          if (!registry.get(accountId)) {
            if (await deps.ownership.ownedElsewhere(accountId)) return notOurs();
            const outcome = await registry.start(accountId, 'connect');
            if (outcome === 'owned_elsewhere') return notOurs();
            if (outcome === 'account_not_found') return fail('account does not exist');
          }
          const session = registry.get(accountId);
          if (!session) return fail('the session ended before it could link');
          const phase = await session.awaitLinkPhase(Math.max(0, remaining()));
          if (phase === 'not_ready') return fail(`the account is not waiting for a link (status: ${session.status})`);
          return { ready: { session, phase } };
        },
        run: async ({ session, phase }) => {
          if (phase === 'linked') {
            await markPairingCodeRefused(table, accountId, commandId, 'already_connected', 'the device is linked already');
            return done('already linked');
          }
          try {
            const { code, expiresAt } = await session.requestPairingCode(command.payload.phoneNumber);
            await markPairingCodeIssued(table, accountId, commandId, code, expiresAt);
            return done('pairing code issued');
          } catch (error) {
            const reason = reasonOf(error);
            log.warn({ reason }, 'pairing code request failed');
            await markPairingCodeRefused(table, accountId, commandId, 'failed', reason);
            return done(`failed: ${reason}`);
          }
        },
      });
    },
  };
}
