import type { Logger } from '../../core/logger.js';
import type { LiveRecord, LiveRequestRecords } from '../../core/store/live-requests.js';
import type { Table } from '../../core/store/table.js';
import type { Ownership } from '../ownership/ownership.js';
import type { SendHandle } from '../session/send-handle.js';
import type { SessionRegistry } from '../session/session-registry.js';
import { done, notOurs, type CommandOutcome } from './outcome.js';

/**
 * The connector's side of a live request (core/store/live-requests.ts): the command runs only
 * while its record is `pending` and before its deadline (a late or redelivered command must not
 * run), the record is claimed right before WhatsApp is asked (pending -> claimed, conditional on
 * the deadline, so the API's timeout and this command exclude each other), and the record the
 * API is waiting on is finished with the outcome.
 */
export interface LiveCommandKind<R extends LiveRecord> {
  records: Pick<LiveRequestRecords<R, never>, 'claimedStatus' | 'find' | 'claim' | 'failPending'>;
  /** The outcome's note when the record is gone. */
  noRecord: string;
  /** The reason the record is failed with when the command came after its deadline. */
  late: string;
  /** Logged when it fails before the claim. */
  failedLog: string;
  /** The outcome's note when the claim did not hold. */
  notClaimed: string;
  /** Logged (info) when the claim did not hold. */
  notClaimedLog?: string;
}

/** What a command does around the claim; `prepare` answers `{ ready }`, or an outcome to stop. */
export interface LiveCommandSteps<R extends LiveRecord, P> {
  /** The command again while its record is claimed: the connector that claimed it stopped. */
  redelivered?: (record: R) => Promise<CommandOutcome>;
  /** Before the claim: `fail` fails the pending record; `remaining` is the time to its deadline. */
  prepare: (before: {
    record: R;
    remaining: () => number;
    fail: (reason: string) => Promise<CommandOutcome>;
  }) => Promise<{ ready: P } | CommandOutcome>;
  /** Not claimed after all: undo what `prepare` made. */
  discard?: (prepared: P) => void;
  /** After the claim: do it and finish the record. */
  run: (prepared: P) => Promise<CommandOutcome>;
}

export interface LiveCommand {
  table: Table;
  log: Logger;
  accountId: string;
  /** The id of the record (the send's messageId, otherwise the commandId). */
  id: string;
}

export async function runLiveCommand<R extends LiveRecord, P>(
  { table, log, accountId, id }: LiveCommand,
  kind: LiveCommandKind<R>,
  steps: LiveCommandSteps<R, P>,
): Promise<CommandOutcome> {
  const { records } = kind;
  const record = await records.find(table, accountId, id);
  // No record: past its TTL or the account was deleted; nobody waits for it.
  if (!record) return done(kind.noRecord);
  if (steps.redelivered && record.status === records.claimedStatus) return steps.redelivered(record);
  if (record.status !== 'pending') return done(`already ${record.status}`);

  const fail = async (reason: string) => {
    log.warn({ reason }, kind.failedLog);
    await records.failPending(table, accountId, id, reason);
    return done(`failed: ${reason}`);
  };
  const remaining = () => record.deadline - Date.now();
  if (remaining() <= 0) return fail(kind.late);

  const before = await steps.prepare({ record, remaining, fail });
  if (!('ready' in before)) return before;

  if (!(await records.claim(table, accountId, id))) {
    steps.discard?.(before.ready);
    // Still pending means only the deadline stood in the way (the API may be gone): record it.
    await records.failPending(table, accountId, id, kind.late);
    if (kind.notClaimedLog) log.info(kind.notClaimedLog);
    return done(kind.notClaimed);
  }
  return steps.run(before.ready);
}

/**
 * The account's socket once it is connected here (waiting until `until()` for a reconnect);
 * `notOurs` when another connector runs the account; otherwise `fail`s.
 */
export async function connectedHandle(
  deps: { registry: SessionRegistry; ownership: Ownership },
  accountId: string,
  until: () => number,
  fail: (reason: string) => Promise<CommandOutcome>,
): Promise<{ ready: SendHandle } | CommandOutcome> {
  const session = deps.registry.get(accountId);
  if (!session) {
    if (await deps.ownership.ownedElsewhere(accountId)) return notOurs();
    return fail('account is not connected');
  }
  const handle = await session.sendHandle(until());
  if ('notConnected' in handle) return fail(`account is not connected (status: ${handle.notConnected})`);
  return { ready: handle };
}

export function reasonOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
