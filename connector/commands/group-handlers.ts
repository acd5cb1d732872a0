import type { Logger } from '../../core/logger.js';
import type { CommandOf } from '../../core/schemas/command.js';
import { groupRequests, markGroupRequestDone, markGroupRequestFailed, markGroupRequestRefused } from '../../core/store/group-requests.js';
import type { Table } from '../../core/store/table.js';
import type { Ownership } from '../ownership/ownership.js';
import type { SessionRegistry } from '../session/session-registry.js';
import { refusalOf, runGroupOperation } from './group-operations.js';
import { done, notOurs, type CommandOutcome } from './outcome.js';

export interface GroupDeps {
  table: Table;
  registry: SessionRegistry;
  ownership: Ownership;
  logger: Logger;
  /** How long an operation waits for a reconnecting session before failing (the API waits too). */
  waitForConnectedMs: number;
}

/**
 * `group`: like a send, it runs only while its request record is `pending` and before its
 * deadline, on the account's live socket; the record is claimed right before WhatsApp is asked,
 * and settled with WhatsApp's answer (or refusal), which the API is waiting on.
 */
export function groupHandlers(deps: GroupDeps) {
  const { table, registry } = deps;

  return {
    async group(command: CommandOf<'group'>): Promise<CommandOutcome> {
      const { accountId, commandId } = command;
      const log = deps.logger.child({ accountId, commandId, command: command.type, op: command.payload.op });
      const request = await groupRequests.find(table, accountId, commandId);
      if (!request) return done('no request record');
      if (request.status !== 'pending') return done(`already ${request.status}`);
      const fail = async (reason: string) => {
        log.warn({ reason }, 'group operation failed');
        await groupRequests.failPending(table, accountId, commandId, reason);
        return done(`failed: ${reason}`);
      };
      const remaining = () => request.deadline - Date.now();
      if (remaining() <= 0) return fail('the connector took the request after its deadline');

      const session = registry.get(accountId);
      if (!session) {
        if (await deps.ownership.ownedElsewhere(accountId)) return notOurs();
        return fail('account is not connected');
      }
      const handle = await session.sendHandle(Date.now() + Math.max(0, Math.min(deps.waitForConnectedMs, remaining())));
      if ('notConnected' in handle) return fail(`account is not connected (status: ${handle.notConnected})`);
      const { sock, groupMetadata } = handle;

      if (!(await groupRequests.claim(table, accountId, commandId))) {
        await groupRequests.failPending(table, accountId, commandId, 'the connector took the request after its deadline');
        return done('not claimed');
      }
      try {
        await markGroupRequestDone(table, accountId, commandId, await runGroupOperation(sock, command.payload, groupMetadata));
        log.info('group operation done');
        return done('done');
      } catch (error) {
        const refused = refusalOf(error);
        if (refused) {
          log.info({ refusal: refused.refusal }, 'WhatsApp refused the group operation');
          await markGroupRequestRefused(table, accountId, commandId, refused.refusal, refused.message);
          return done(`refused: ${refused.refusal}`);
        }
        const reason = error instanceof Error ? error.message : String(error);
        log.warn({ reason }, 'group operation failed');
        await markGroupRequestFailed(table, accountId, commandId, reason);
        return done(`failed: ${reason}`);
      }
    },
  };
}
