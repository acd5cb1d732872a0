import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '../../../core/schemas/command.js';
import { updateAccountStatus } from '../../../core/store/accounts.js';
import { markPairingCodeIssued, markPairingCodeRefused, pairingCodeRequests } from '../../../core/store/pairing-codes.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import type { FakeConnector } from '../../support/fake-connector.js';
import { startApiStack, type TestApi } from '../../support/test-api.js';
import type { TestStack } from '../../support/test-stack.js';
import { waitFor } from '../../support/wait.js';

/**
 * POST /accounts/:accountId/pairing-code against the emulators. The fake connector only records
 * commands; each case plays the connector's answer on the request record itself.
 */
let stack: TestStack;
let api: TestApi;
let connector: FakeConnector;
let stopStack: (() => Promise<void>) | undefined;
let table: Table;
let counter = 0;

const PHONE_NUMBER_ERROR = { ok: false, error: 'phoneNumber must be digits with country code' };

async function account(): Promise<string> {
  const id = `pair${Date.now().toString(36)}${counter++}`;
  expect((await api.call('POST', '/accounts', { id })).status).toBe(201);
  return id;
}

const pairingCommandsOf = (accountId: string) =>
  connector.commands.filter(
    (c): c is Extract<Command, { type: 'request_pairing_code' }> => c.accountId === accountId && c.type === 'request_pairing_code',
  );

/** Waits for the account's pairing-code command, takes its request as a connector would, then settles it. */
async function answer(accountId: string, settle: (commandId: string) => Promise<unknown>): Promise<Command> {
  const command = await connector.waitFor((c) => c.accountId === accountId && c.type === 'request_pairing_code');
  expect(await pairingCodeRequests.claim(table, accountId, command.commandId)).toBe(true);
  await settle(command.commandId);
  return command;
}

beforeAll(async () => {
  ({ stack, api, connector, stop: stopStack } = await startApiStack({ overrides: { SEND_TIMEOUT_MS: '1500', SEND_SETTLE_MS: '500' } }));
  table = tableOf(stack.config, stack.clients);
});
afterAll(async () => {
  await stopStack?.();
});

describe('POST /accounts/:accountId/pairing-code', () => {
  it('the connector gives a code: 200 {ok, code, expiresAt}; the number is sent as digits', async () => {
    const id = await account();
    const expiresAt = Date.now() + 160_000;
    const [response, command] = await Promise.all([
      api.call('POST', `/accounts/${id}/pairing-code`, { phoneNumber: '+1 555-123 4567' }),
      answer(id, (commandId) => markPairingCodeIssued(table, id, commandId, 'ABCD1234', expiresAt)),
    ]);
    expect(response).toMatchObject({ status: 200, body: { ok: true, code: 'ABCD1234', expiresAt } });
    expect(command).toMatchObject({ type: 'request_pairing_code', payload: { phoneNumber: '15551234567' } });
  });

  it('the connector finds the device linked: 400 Account is already connected', async () => {
    const id = await account();
    const [response] = await Promise.all([
      api.call('POST', `/accounts/${id}/pairing-code`, { phoneNumber: '15551234567' }),
      answer(id, (commandId) => markPairingCodeRefused(table, id, commandId, 'already_connected', 'linked')),
    ]);
    expect(response).toMatchObject({ status: 400, body: { ok: false, error: 'Account is already connected' } });
  });

  it('the connector cannot ask: 500 internal_error with its reason', async () => {
    const id = await account();
    const [response] = await Promise.all([
      api.call('POST', `/accounts/${id}/pairing-code`, { phoneNumber: '15551234567' }),
      answer(id, (commandId) => markPairingCodeRefused(table, id, commandId, 'failed', 'the socket is not waiting for a link')),
    ]);
    expect(response).toMatchObject({
      status: 500,
      body: { ok: false, error: 'internal_error', detail: 'the socket is not waiting for a link' },
    });
  });

  it('no connector answers: 500 internal_error at the deadline, and the request can no longer be taken', async () => {
    const id = await account();
    const response = await api.call('POST', `/accounts/${id}/pairing-code`, { phoneNumber: '15551234567' });
    expect(response).toMatchObject({ status: 500, body: { ok: false, error: 'internal_error' } });
    expect(String(response.body.detail)).toMatch(/no answer from the connector/);
    const [command] = await waitFor('the command', () => pairingCommandsOf(id).length > 0 && pairingCommandsOf(id));
    expect(await pairingCodeRequests.find(table, id, command!.commandId)).toMatchObject({ status: 'failed' });
    expect(await pairingCodeRequests.claim(table, id, command!.commandId)).toBe(false);
  });

  it('a connected account: 400 Account is already connected, nothing queued', async () => {
    const id = await account();
    await updateAccountStatus(table, id, { status: 'connected' });
    const response = await api.call('POST', `/accounts/${id}/pairing-code`, { phoneNumber: '15551234567' });
    expect(response).toMatchObject({ status: 400, body: { ok: false, error: 'Account is already connected' } });
    expect(pairingCommandsOf(id)).toEqual([]);
  });

  it('phoneNumber missing, not a string, or not digits after +, spaces and dashes: 400', async () => {
    const id = await account();
    for (const body of [
      {},
      { phoneNumber: null },
      { phoneNumber: 15551234567 },
      { phoneNumber: '' },
      { phoneNumber: '+' },
      { phoneNumber: '1555abc' },
      { phoneNumber: '1 (555) 123' },
      { phoneNumber: '1555+123' },
    ]) {
      const response = await api.call('POST', `/accounts/${id}/pairing-code`, body);
      expect({ status: response.status, body: response.body }, JSON.stringify(body)).toEqual({ status: 400, body: PHONE_NUMBER_ERROR });
    }
    const notJson = await api.call('POST', `/accounts/${id}/pairing-code`, '{not json');
    expect(notJson.status).toBe(400);
    expect(pairingCommandsOf(id)).toEqual([]);
  });

  it('an unknown account: 404 Account not found, whatever the body', async () => {
    for (const body of [{ phoneNumber: '15551234567' }, { phoneNumber: 'x' }, {}]) {
      const response = await api.call('POST', '/accounts/nosuchaccount/pairing-code', body);
      expect(response).toMatchObject({ status: 404, body: { ok: false, error: 'Account not found' } });
    }
  });

  it('is in /openapi.json with its request and answer schemas', async () => {
    const response = await fetch(`${api.url}/openapi.json`);
    interface Operation {
      summary?: string;
      requestBody?: unknown;
      responses?: Record<string, unknown>;
    }
    const doc = (await response.json()) as { paths: Record<string, Record<string, Operation>> };
    const route = doc.paths['/accounts/{accountId}/pairing-code']?.post;
    expect(route?.summary).toMatch(/code/i);
    expect(JSON.stringify(route?.requestBody)).toContain('phoneNumber');
    expect(Object.keys(route?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '404', '500']));
    expect(JSON.stringify(route?.responses?.['200'])).toContain('expiresAt');
  });
});
