import { queuedPublisher } from '../../../connector/inbound/event-publisher.js';
import { describe, expect, it } from 'vitest';
import { sessionEvents } from '../../../connector/session/session-events.js';
import { AccountStatusWriter } from '../../../connector/session/status-writer.js';
import { NotFoundError } from '../../../core/errors.js';
import { createAccount, findAccount } from '../../../core/store/accounts.js';
import { logSink } from '../../support/log-sink.js';
import { silentLogger, useTestStack } from '../../support/test-stack.js';
import { webhookEvents } from '../inbound/webhook-events.js';

/**
 * The connector's one writer of account status: every change logged, emitted with its reason or
 * logged with why not, written with `lastDisconnect` when it is a disconnect.
 */
describe('the account status writer', () => {
  const ctx = useTestStack();
  const writerWithLog = () => {
    const log = logSink('info');
    const writer = new AccountStatusWriter({
      table: ctx.table,
      events: sessionEvents(queuedPublisher(ctx.queues), silentLogger),
      logger: log.logger,
    });
    return { writer, lines: log.lines };
  };

  it('a disconnect: logged, one session.status event, written with lastDisconnect', async () => {
    await createAccount(ctx.table, { id: 'writer1', collectionName: 'auth_writer1', status: 'connected' });
    const { writer, lines } = writerWithLog();
    await writer.record({ accountId: 'writer1', status: 'reconnecting', previousStatus: 'connected', reason: 'connection_lost' });
    const [event] = await webhookEvents(ctx.queues, 'writer1', 1);
    expect(event?.body).toMatchObject({ status: 'reconnecting', previousStatus: 'connected', reason: 'connection_lost' });
    const stored = await findAccount(ctx.table, 'writer1', true);
    expect(stored).toMatchObject({ status: 'reconnecting', lastDisconnect: { reason: 'connection_lost', at: event?.body.timestamp } });
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'account status', accountId: 'writer1', status: 'reconnecting' }));
  });

  it('a change without a reason: written, no event, and the log says why', async () => {
    await createAccount(ctx.table, { id: 'writer2', collectionName: 'auth_writer2', status: 'reconnecting' });
    const { writer, lines } = writerWithLog();
    await writer.record({ accountId: 'writer2', status: 'not_started', previousStatus: 'reconnecting', silentBecause: 'a test says so' });
    expect(await findAccount(ctx.table, 'writer2', true)).toMatchObject({ status: 'not_started' });
    expect((await findAccount(ctx.table, 'writer2', true))?.lastDisconnect).toBeUndefined();
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'no session.status event', accountId: 'writer2', why: 'a test says so' }));
    // A later event of the account is the only one there: the silent change queued none.
    await writer.record({ accountId: 'writer2', status: 'connecting', previousStatus: 'not_started', reason: 'connected' });
    const events = await webhookEvents(ctx.queues, 'writer2', 2, 3_000);
    expect(events.map((e) => e.body.status)).toEqual(['connecting']);
  });

  it('a status that stays: neither logged nor emitted, unless reported; an account gone throws NotFoundError', async () => {
    await createAccount(ctx.table, { id: 'writer3', collectionName: 'auth_writer3', status: 'reconnecting' });
    const { writer, lines } = writerWithLog();
    await writer.record({ accountId: 'writer3', status: 'reconnecting', previousStatus: 'reconnecting', reason: 'connection_lost' });
    expect(lines).toEqual([]);
    await writer.record({
      accountId: 'writer3',
      status: 'reconnecting',
      previousStatus: 'reconnecting',
      reason: 'client_too_old',
      report: true,
    });
    const events = await webhookEvents(ctx.queues, 'writer3', 2, 3_000);
    expect(events.map((e) => e.body.reason)).toEqual(['client_too_old']);
    expect((await findAccount(ctx.table, 'writer3', true))?.lastDisconnect?.reason).toBe('client_too_old');
    await expect(
      writer.record({ accountId: 'nobody', status: 'connected', previousStatus: 'connecting', reason: 'connected' }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });
});
