import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '../../../core/schemas/command.js';
import type { SocketQueryAnswer } from '../../../core/schemas/socket-query.js';
import { updateAccountStatus } from '../../../core/store/accounts.js';
import { groupRequests, markGroupRequestDone } from '../../../core/store/group-requests.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import type { FakeConnector } from '../../support/fake-connector.js';
import { startApiStack, type TestApi } from '../../support/test-api.js';

/**
 * The contact routes (number check, profile picture) against the emulators. The fake connector
 * only records commands; each case plays the connector's answer on the request record itself.
 */
let api: TestApi;
let connector: FakeConnector;
let stopStack: (() => Promise<void>) | undefined;
let table: Table;
let counter = 0;

type SocketQueryCommand = Extract<Command, { type: 'socket_query' }>;

async function connectedAccount(): Promise<string> {
  const id = `ct${Date.now().toString(36)}${counter++}`;
  expect((await api.call('POST', '/accounts', { id })).status).toBe(201);
  await updateAccountStatus(table, id, { status: 'connected' });
  return id;
}

/** Waits for the account's next command, takes it as a connector would, and records `result`. */
async function answer(accountId: string, result: SocketQueryAnswer): Promise<SocketQueryCommand> {
  const seen = new Set(connector.commands.filter((c) => c.accountId === accountId).map((c) => c.commandId));
  const command = (await connector.waitFor(
    (c) => c.accountId === accountId && c.type === 'socket_query' && !seen.has(c.commandId),
  )) as SocketQueryCommand;
  expect(await groupRequests.claim(table, accountId, command.commandId)).toBe(true);
  await markGroupRequestDone(table, accountId, command.commandId, result);
  return command;
}

beforeAll(async () => {
  const started = await startApiStack({ overrides: { SEND_TIMEOUT_MS: '1500', SEND_SETTLE_MS: '500' } });
  ({ api, connector, stop: stopStack } = started);
  table = tableOf(started.stack.config, started.stack.clients);
});
afterAll(async () => {
  await stopStack?.();
});

describe('contacts API: validation before any state lookup', () => {
  const phoneError = 'phone must be 6 to 15 digits with country code';
  const cases: [string, string][] = [
    ['/contacts/12345/exists', phoneError],
    ['/contacts/1234567890123456/exists', phoneError],
    ['/contacts/1555abc1111/exists', phoneError],
    ['/contacts/++15550001111/exists', phoneError],
    ['/contacts/15550001111@s.whatsapp.net/exists', phoneError],
    ['/contacts/nope/picture', 'jid must be a valid JID'],
    ['/contacts/15550001111@example.com/picture', 'jid must be a valid JID'],
  ];
  it.each(cases)('GET %s: 400 %s, even for an unknown account', async (path, error) => {
    const response = await api.call('GET', `/accounts/nosuchaccount${path}`);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ ok: false, error });
  });

  it('a valid request for an unknown account is 404; for one not connected 500 with nothing queued', async () => {
    const unknown = await api.call('GET', '/accounts/nosuchaccount/contacts/15550001111/exists');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ ok: false, error: 'Account not found' });
    const id = `ct${Date.now().toString(36)}${counter++}`;
    await api.call('POST', '/accounts', { id });
    const response = await api.call('GET', `/accounts/${id}/contacts/15550001111@s.whatsapp.net/picture`);
    expect(response.status).toBe(500);
    expect(response.body.error).toBe('internal_error');
    expect(connector.commands.some((c) => c.accountId === id && c.type === 'socket_query')).toBe(false);
  });
});

describe('contacts API: answers through the connector', () => {
  it('checks a number (a leading + is dropped) and answers exists with the JID, or not', async () => {
    const id = await connectedAccount();
    const jid = '15550001111@s.whatsapp.net';
    const [found, command] = await Promise.all([
      api.call('GET', `/accounts/${id}/contacts/+15550001111/exists`),
      answer(id, { exists: true, jid }),
    ]);
    expect(command.payload).toEqual({ op: 'contact_exists', phone: '15550001111' });
    expect(found.body).toEqual({ ok: true, exists: true, jid });
    const [missing] = await Promise.all([api.call('GET', `/accounts/${id}/contacts/15550009999/exists`), answer(id, { exists: false })]);
    expect(missing.body).toEqual({ ok: true, exists: false });
  });

  it('gives the picture URL of a normalised JID, or null', async () => {
    const id = await connectedAccount();
    const url = 'https://pps.whatsapp.net/v/t61/abc.jpg';
    const [got, command] = await Promise.all([
      api.call('GET', `/accounts/${id}/contacts/15550001111:2@s.whatsapp.net/picture`),
      answer(id, { url }),
    ]);
    expect(command.payload).toEqual({ op: 'contact_picture', jid: '15550001111@s.whatsapp.net' });
    expect(got.body).toEqual({ ok: true, url });
    const [none] = await Promise.all([
      api.call('GET', `/accounts/${id}/contacts/15550009999@s.whatsapp.net/picture`),
      answer(id, { url: null }),
    ]);
    expect(none.body).toEqual({ ok: true, url: null });
  });
});
