import type { Config } from '../../core/config.js';
import { OperationFailedError } from '../../core/errors.js';
import type { Command } from '../../core/schemas/command.js';
import type { LiveRecord, LiveRequestRecords } from '../../core/store/live-requests.js';
import type { Services } from './services.js';

/**
 * The API's side of a live request (core/store/live-requests.ts): a `pending` record with a
 * deadline, its command, then polling. At the deadline the API fails the record if no connector
 * took it (so none will); one taken in time gets SEND_SETTLE_MS more to finish it.
 */
export interface LiveRequestWait<R extends LiveRecord, Ids extends object> {
  records: LiveRequestRecords<R, Ids>;
  isFinal: (record: R) => boolean;
  /** Named when the record is gone: `<name> disappeared (account deleted?)`. */
  name: string;
  /** The reason the record is failed with when its command could not be queued. */
  notQueuedReason: string;
  /** The reason a record still pending when the API stops waiting is failed with. */
  notTakenReason: (config: Config, clientLeft: boolean) => string;
  /** Thrown with that reason; OperationFailedError unless given. */
  notTakenError?: (reason: string) => Error;
  /** Thrown when a connector took it but did not finish it within SEND_SETTLE_MS after the deadline. */
  unfinishedError: (config: Config) => Error;
}

type ByCommand = { commandId: string };

/** Writes the record `pending`, queues `command` for it and answers the record once finished. */
export async function askConnector<R extends LiveRecord>(
  services: Services,
  wait: LiveRequestWait<R, ByCommand>,
  command: Command,
): Promise<R> {
  const { accountId, commandId } = command;
  const deadline = Date.now() + services.config.SEND_TIMEOUT_MS;
  await wait.records.putPending(services.table, accountId, { commandId }, deadline);
  await queueOrFail(services, wait, commandId, command);
  return awaitFinished(services, wait, accountId, commandId, deadline);
}

/** Queues the command of the pending record `id`; when it cannot be, fails the record and throws. */
export async function queueOrFail<R extends LiveRecord, Ids extends object>(
  services: Services,
  wait: LiveRequestWait<R, Ids>,
  id: string,
  command: Command,
): Promise<void> {
  try {
    await services.queues.sendCommand(command);
  } catch (error) {
    await wait.records.failPending(services.table, command.accountId, id, wait.notQueuedReason);
    throw error;
  }
}

/**
 * The record once final. Until the deadline (or `signal` aborting) it only reads; then it fails
 * the record if still pending, or, when the connector had claimed it, waits SEND_SETTLE_MS more
 * for the connector's outcome.
 */
export async function awaitFinished<R extends LiveRecord, Ids extends object>(
  services: Services,
  wait: LiveRequestWait<R, Ids>,
  accountId: string,
  id: string,
  deadline: number,
  signal?: AbortSignal,
): Promise<R> {
  const { table, config } = services;
  // Nothing can be final yet: the command has only just been queued (one read less per request).
  const first = await pollUntilFinal(services, wait, accountId, id, deadline, signal, FIRST_POLL_MS);
  if (first) return first;

  const reason = wait.notTakenReason(config, signal?.aborted === true);
  if (await wait.records.failPending(table, accountId, id, reason)) {
    throw wait.notTakenError ? wait.notTakenError(reason) : new OperationFailedError(reason);
  }

  const finishUntil = Math.max(deadline, Date.now()) + config.SEND_SETTLE_MS;
  const finished = await pollUntilFinal(services, wait, accountId, id, finishUntil);
  if (finished) return finished;
  throw wait.unfinishedError(config);
}

const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 250;

/** The record once final; undefined when `until` passed (or `signal` aborted) first. */
async function pollUntilFinal<R extends LiveRecord, Ids extends object>(
  services: Services,
  wait: LiveRequestWait<R, Ids>,
  accountId: string,
  id: string,
  until: number,
  signal?: AbortSignal,
  firstReadAfterMs = 0,
): Promise<R | undefined> {
  let interval = FIRST_POLL_MS;
  const firstWait = Math.min(firstReadAfterMs, until - Date.now());
  if (firstWait > 0) await new Promise((resolve) => setTimeout(resolve, firstWait));
  for (;;) {
    const record = await wait.records.find(services.table, accountId, id, true);
    if (!record) throw new OperationFailedError(`${wait.name} disappeared (account deleted?)`);
    if (wait.isFinal(record)) return record;
    const remaining = until - Date.now();
    if (remaining <= 0 || signal?.aborted) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.min(interval, remaining)));
    interval = Math.min(MAX_POLL_MS, interval * 2);
  }
}
