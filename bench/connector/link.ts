/**
 * Linking accounts in bulk, as bench:connector and bench:scale do it: for each account a sandbox
 * phone and an account record (status `connecting`), a `connect` command on its shard's queue,
 * then the QR the connector logs is scanned by the phone. Resolves once every one of them is
 * `connected` in the store and the network has nothing left for them: a linked device is sent
 * its history bootstrap (every known PN<->LID mapping, hundreds of key writes), and a connector
 * stopped before it took that in gets it again at its next start, so a restart measured at once
 * would measure the rest of the linking (about half the resume time at 300 accounts).
 */
import { newCommandId } from '../../core/ids.js';
import type { Queues } from '../../core/queues.js';
import { createAccount, listAccounts } from '../../core/store/accounts.js';
import type { Table } from '../../core/store/table.js';
import type { ChildConnector } from '../../test/e2e/support/child-connector.js';
import type { SandboxControl } from '../../test/e2e/support/sandbox-control.js';
import { waitFor } from '../../test/support/wait.js';
import { inBatches } from './measure.js';

export interface BenchAccount {
  id: string;
  phone: string;
}

export interface LinkDeps {
  table: Table;
  queues: Queues;
  control: SandboxControl;
  /** The connector that runs the accounts' shards and logs their QRs. */
  connector: Pick<ChildConnector, 'waitForLine'>;
  concurrency?: number;
}

const QR_TIMEOUT_MS = 120_000;
const CONNECTED_TIMEOUT_MS = 600_000;

/** Links `accounts`; returns the seconds it took. */
export async function linkAccounts(deps: LinkDeps, accounts: BenchAccount[]): Promise<number> {
  const { table, queues, control, connector } = deps;
  const started = performance.now();
  await inBatches(accounts, deps.concurrency ?? 8, async ({ id, phone }) => {
    await control.createPhone(phone);
    await createAccount(table, { id, collectionName: `auth_${id}`, status: 'connecting' });
    await queues.sendCommand({ type: 'connect', accountId: id, commandId: newCommandId(), payload: {} });
    const qrLine = await connector.waitForLine(`QR of ${id}`, (l) => l.event === 'qr' && l.accountId === id, QR_TIMEOUT_MS);
    await control.scan(phone, String(qrLine.qr));
  });
  const wanted = new Set(accounts.map((account) => account.id));
  await waitFor(
    `${wanted.size} accounts connected`,
    async () => (await listAccounts(table)).filter((a) => wanted.has(a._id) && a.status === 'connected').length === wanted.size,
    { timeoutMs: CONNECTED_TIMEOUT_MS, intervalMs: 1_000 },
  );
  await waitFor(
    'the linked devices to take in what the network sent them',
    async () => Object.values(await control.undelivered()).every((count) => count === 0),
    { timeoutMs: CONNECTED_TIMEOUT_MS, intervalMs: 1_000 },
  );
  return (performance.now() - started) / 1000;
}
