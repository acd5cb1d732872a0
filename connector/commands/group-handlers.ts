import type { Logger } from '../../core/logger.js';
import type { CommandOf } from '../../core/schemas/command.js';
import type { GroupResult } from '../../core/schemas/group.js';
import { isSocketQuery, type SocketQueryAnswer } from '../../core/schemas/socket-query.js';
import { groupRequests, markGroupRequestDone, markGroupRequestFailed, markGroupRequestRefused } from '../../core/store/group-requests.js';
import type { Table } from '../../core/store/table.js';
import type { Ownership } from '../ownership/ownership.js';
import type { SendHandle } from '../session/send-handle.js';
import type { SessionRegistry } from '../session/session-registry.js';
import { refusalOf, runGroupOperation } from './group-operations.js';
import { connectedHandle, reasonOf, runLiveCommand } from './live-commands.js';
import { done, type CommandOutcome } from './outcome.js';
import { runSocketQuery } from './socket-queries.js';

export interface GroupDeps {
  table: Table;
  registry: SessionRegistry;
  ownership: Ownership;
  logger: Logger;
  /** How long an operation waits for a reconnecting session before failing (the API waits too). */
  waitForConnectedMs: number;
}

const GROUP_COMMAND = {
  records: groupRequests,
  noRecord: 'no request record',
  late: 'the connector took the request after its deadline',
  failedLog: 'group operation failed',
  notClaimed: 'not claimed',
};

/**
 * `group` and `socket_query`: like a send, each runs only while its request record is `pending`
 * and before its deadline, on the account's live socket; the record is claimed right before
 * WhatsApp is asked, and finished with WhatsApp's answer (or refusal), which the API is waiting on
 * (live-commands.ts). A `group` command that carries a socket query (an API from before
 * `socket_query`) runs it as a `socket_query` would.
 */
export function groupHandlers(deps: GroupDeps) {
  const { table } = deps;

  function askSocket(
    command: CommandOf<'group' | 'socket_query'>,
    ask: (handle: SendHandle) => Promise<GroupResult | SocketQueryAnswer>,
  ): Promise<CommandOutcome> {
    const { accountId, commandId } = command;
    const log = deps.logger.child({ accountId, commandId, command: command.type, op: command.payload.op });
    return runLiveCommand({ table, log, accountId, id: commandId }, GROUP_COMMAND, {
      prepare: ({ remaining, fail }) =>
        connectedHandle(deps, accountId, () => Date.now() + Math.max(0, Math.min(deps.waitForConnectedMs, remaining())), fail),
      run: async (handle) => {
        try {
          await markGroupRequestDone(table, accountId, commandId, await ask(handle));
          log.info('group operation done');
          return done('done');
        } catch (error) {
          const refused = refusalOf(error);
          if (refused) {
            log.info({ refusal: refused.refusal }, 'WhatsApp refused the group operation');
            await markGroupRequestRefused(table, accountId, commandId, refused.refusal, refused.message);
            return done(`refused: ${refused.refusal}`);
          }
          const reason = reasonOf(error);
          log.warn({ reason }, 'group operation failed');
          await markGroupRequestFailed(table, accountId, commandId, reason);
          return done(`failed: ${reason}`);
        }
      },
    });
  }

  return {
    group(command: CommandOf<'group'>): Promise<CommandOutcome> {
      const { payload } = command;
      return askSocket(command, ({ sock, groupMetadata }) =>
        isSocketQuery(payload) ? runSocketQuery(sock, payload) : runGroupOperation(sock, payload, groupMetadata),
      );
    },
    socket_query(command: CommandOf<'socket_query'>): Promise<CommandOutcome> {
      return askSocket(command, ({ sock }) => runSocketQuery(sock, command.payload));
    },
  };
}
