import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '../../../core/schemas/command.js';
import { updateAccountStatus } from '../../../core/store/accounts.js';
import { groupRequests, markGroupRequestDone, markGroupRequestRefused } from '../../../core/store/group-requests.js';
import type { GroupResult, GroupRefusal } from '../../../core/schemas/group.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import type { FakeConnector } from '../../support/fake-connector.js';
import { startApiStack, type TestApi } from '../../support/test-api.js';

/**
 * The groups API against the emulators. The fake connector only records commands; each case
 * plays the connector's answer on the group request record itself.
 */
let api: TestApi;
let connector: FakeConnector;
let stopStack: (() => Promise<void>) | undefined;
let table: Table;
let counter = 0;

const GROUP = '120363012345678901@g.us';

async function connectedAccount(): Promise<string> {
  const id = `grp${Date.now().toString(36)}${counter++}`;
  expect((await api.call('POST', '/accounts', { id })).status).toBe(201);
  await updateAccountStatus(table, id, { status: 'connected' });
  return id;
}

type GroupCommand = Extract<Command, { type: 'group' }>;

/** Waits for the account's next group command, takes it as a connector would, and settles it. */
async function answer(accountId: string, settle: { result: GroupResult } | { refusal: GroupRefusal }): Promise<GroupCommand> {
  const seen = new Set(connector.commands.filter((c) => c.type === 'group' && c.accountId === accountId).map((c) => c.commandId));
  const command = (await connector.waitFor(
    (c) => c.accountId === accountId && c.type === 'group' && !seen.has(c.commandId),
  )) as GroupCommand;
  expect(await groupRequests.claim(table, accountId, command.commandId)).toBe(true);
  if ('result' in settle) await markGroupRequestDone(table, accountId, command.commandId, settle.result);
  else await markGroupRequestRefused(table, accountId, command.commandId, settle.refusal, 'iq error');
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

describe('groups API: validation before any state lookup', () => {
  const cases: [string, string, unknown, string][] = [
    ['POST', '/groups', {}, 'subject and participants are required'],
    ['POST', '/groups', { subject: 'x' }, 'subject and participants are required'],
    ['POST', '/groups', { subject: 'x', participants: [] }, 'participants must be a non-empty array of JIDs'],
    ['POST', '/groups', { subject: 'x', participants: 'a' }, 'participants must be a non-empty array of JIDs'],
    ['POST', '/groups', { subject: 'x', participants: ['nope'] }, 'participants must be user JIDs (<digits>@s.whatsapp.net)'],
    ['POST', '/groups', { subject: 'x', participants: [GROUP] }, 'participants must be user JIDs (<digits>@s.whatsapp.net)'],
    [
      'POST',
      '/groups',
      { subject: 'x'.repeat(101), participants: ['15550001111@s.whatsapp.net'] },
      'subject must be at most 100 characters',
    ],
    ['POST', `/groups/${GROUP}/participants`, { participants: ['15550001111@s.whatsapp.net'] }, 'action and participants are required'],
    [
      'POST',
      `/groups/${GROUP}/participants`,
      { action: 'kick', participants: ['15550001111@s.whatsapp.net'] },
      'action must be one of add, remove, promote, demote',
    ],
    ['PATCH', `/groups/${GROUP}`, {}, 'subject or description is required'],
    ['PATCH', `/groups/${GROUP}`, { subject: '  ' }, 'subject must not be empty'],
    ['PATCH', `/groups/${GROUP}`, { description: 'd'.repeat(2049) }, 'description must be at most 2048 characters'],
    ['GET', '/groups/15550001111@s.whatsapp.net', undefined, 'groupId must be a group JID (<digits>@g.us or <digits>-<digits>@g.us)'],
    ['POST', '/groups/abc/leave', undefined, 'groupId must be a group JID (<digits>@g.us or <digits>-<digits>@g.us)'],
  ];
  it.each(cases)('%s %s %j: 400 %s, even for an unknown account', async (method, path, body, error) => {
    const response = await api.call(method, `/accounts/nosuchaccount${path}`, body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ ok: false, error });
  });

  it('a valid request for an unknown account is 404; for one not connected 500 with nothing queued', async () => {
    expect((await api.call('GET', '/accounts/nosuchaccount/groups')).body).toEqual({ ok: false, error: 'Account not found' });
    const id = `grp${Date.now().toString(36)}${counter++}`;
    await api.call('POST', '/accounts', { id });
    const response = await api.call('GET', `/accounts/${id}/groups`);
    expect(response.status).toBe(500);
    expect(response.body.error).toBe('internal_error');
    expect(connector.commands.some((c) => c.accountId === id && c.type === 'group')).toBe(false);
  });
});

describe('groups API: answers through the connector', () => {
  it('creates a group (201) with normalised participant JIDs in the command', async () => {
    const id = await connectedAccount();
    const group = { groupId: GROUP, subject: 'Team', owner: '15550000000@s.whatsapp.net', participants: [] };
    const [response, command] = await Promise.all([
      api.call('POST', `/accounts/${id}/groups`, { subject: 'Team', participants: ['15550001111:3@s.whatsapp.net'] }),
      answer(id, { result: { group } }),
    ]);
    expect(command.payload).toEqual({ op: 'create', subject: 'Team', participants: ['15550001111@s.whatsapp.net'] });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ ok: true, group });
  });

  it('lists, changes participants, updates, gives the invite and leaves', async () => {
    const id = await connectedAccount();
    const groups = [{ groupId: GROUP, subject: 'Team', size: 3, createdAt: '2026-01-01T00:00:00.000Z' }];
    const [listed] = await Promise.all([api.call('GET', `/accounts/${id}/groups`), answer(id, { result: { groups } })]);
    expect(listed.body).toEqual({ ok: true, groups });

    const results = [{ jid: '15550001111@s.whatsapp.net', status: 200 }];
    const [changed, command] = await Promise.all([
      api.call('POST', `/accounts/${id}/groups/120363012345678901/participants`, {
        action: 'promote',
        participants: ['15550001111@s.whatsapp.net'],
      }),
      answer(id, { result: { results } }),
    ]);
    expect(command.payload).toEqual({
      op: 'participants',
      groupId: GROUP,
      action: 'promote',
      participants: ['15550001111@s.whatsapp.net'],
    });
    expect(changed.body).toEqual({ ok: true, results });

    const [updated, updateCommand] = await Promise.all([
      api.call('PATCH', `/accounts/${id}/groups/${GROUP}`, { description: '' }),
      answer(id, { result: {} }),
    ]);
    expect(updateCommand.payload).toEqual({ op: 'update', groupId: GROUP, description: '' });
    expect(updated.body).toEqual({ ok: true, message: 'Group updated' });

    const invite = { code: 'AbCdEf0123456789012345', url: 'https://chat.whatsapp.com/AbCdEf0123456789012345' };
    const [got] = await Promise.all([api.call('GET', `/accounts/${id}/groups/${GROUP}/invite`), answer(id, { result: invite })]);
    expect(got.body).toEqual({ ok: true, ...invite });

    const [left] = await Promise.all([api.call('POST', `/accounts/${id}/groups/${GROUP}/leave`), answer(id, { result: {} })]);
    expect(left.body).toEqual({ ok: true, message: 'Left the group' });
  });

  it("maps WhatsApp's refusals: unknown group 404, not a member or not an admin 403", async () => {
    const id = await connectedAccount();
    const cases: [GroupRefusal, number, string][] = [
      ['not_found', 404, 'Group not found'],
      ['not_member', 403, 'The account is not a member of this group'],
      ['not_admin', 403, 'Only group admins can do this'],
    ];
    for (const [refusal, status, error] of cases) {
      const [response] = await Promise.all([api.call('GET', `/accounts/${id}/groups/${GROUP}/invite`), answer(id, { refusal })]);
      expect(response.status).toBe(status);
      expect(response.body).toEqual({ ok: false, error });
    }
  });

  it('fails with 500 when no connector takes the request before the deadline', async () => {
    const id = await connectedAccount();
    const response = await api.call('GET', `/accounts/${id}/groups/${GROUP}`);
    expect(response.status).toBe(500);
    expect(response.body).toMatchObject({
      ok: false,
      error: 'internal_error',
      detail: expect.stringContaining('no answer from the connector'),
    });
  });
});
