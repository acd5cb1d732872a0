import { newCommandId, newMessageId } from '../../../core/ids.js';
import { createAccount } from '../../../core/store/accounts.js';
import { isFinalStatus } from '../../../core/schemas/outbound.js';
import { findOutbound, putPendingOutbound } from '../../../core/store/outbound.js';
import type { Gateway } from './gateway.js';
import { waitFor } from '../../support/wait.js';

/**
 * Driving the connector through its command queue alone, as the API would but without HTTP:
 * for suites about the connector itself (sessions, restarts, ownership).
 */
export interface SandboxAccount {
  id: string;
  phone: string;
}

/** Creates the sandbox phone and the account record, enqueues `connect`, scans the QR. */
export async function connectByCommand(gw: Gateway, account: SandboxAccount): Promise<void> {
  await gw.control.createPhone(account.phone);
  await createAccount(gw.table, { id: account.id, collectionName: `auth_${account.id}`, status: 'connecting' });
  const from = gw.logs.lines.length;
  await gw.queues.sendCommand({ type: 'connect', accountId: account.id, commandId: newCommandId(), payload: {} });
  await gw.linkAccount(account.id, account.phone, { logsFrom: from });
}

/** Enqueues a text send with its pending outbound record; resolves once it is sent or failed. */
export async function sendTextByCommand(gw: Gateway, accountId: string, to: string, text: string) {
  const messageId = newMessageId();
  const commandId = newCommandId();
  await putPendingOutbound(gw.table, accountId, { messageId, commandId }, Date.now() + gw.config.SEND_TIMEOUT_MS);
  await gw.queues.sendCommand({ type: 'send_text', accountId, commandId, payload: { messageId, to, text } });
  // Past the send's deadline: a send that cannot go ends `failed` by then, which is for the caller to judge.
  const outbound = await waitFor(
    'the send to settle',
    async () => {
      const found = await findOutbound(gw.table, accountId, messageId);
      return found && isFinalStatus(found.status) ? found : undefined;
    },
    { timeoutMs: gw.config.SEND_TIMEOUT_MS + 30_000 },
  );
  return { messageId, outbound };
}
