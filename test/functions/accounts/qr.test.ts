import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { qrMatrix } from '../../../core/qr-image.js';
import { updateAccountStatus } from '../../../core/store/accounts.js';
import { clearQr, putQr } from '../../../core/store/qr.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { modulesOfPng, modulesOfSvg } from '../../support/png-modules.js';
import { startApiStack, type TestApi } from '../../support/test-api.js';
import type { TestStack } from '../../support/test-stack.js';

/** GET /accounts/:accountId/qr, with the QR written to the store as the connector writes it. */
const QR_TEXT = '2@bG9uZ2VyIHJlZmVyZW5jZSB0ZXh0IGZvciBhIHRlc3Q=,bm9pc2Uga2V5IGZvciB0ZXN0cw==,aWRlbnRpdHkga2V5,YWR2IHNlY3JldA==';

let stack: TestStack;
let table: Table;
let api: TestApi;
let stopStack: (() => Promise<void>) | undefined;
let counter = 0;

beforeAll(async () => {
  ({ stack, api, stop: stopStack } = await startApiStack());
  table = tableOf(stack.config, stack.clients);
});
afterAll(async () => {
  await stopStack?.();
});

/** An account waiting for a scan, whose connector published `QR_TEXT` a moment ago. */
async function accountShowingQr(): Promise<{ id: string; before: number }> {
  const id = `qr${Date.now().toString(36)}${counter++}`;
  expect((await api.call('POST', '/accounts', { id })).status).toBe(201);
  const before = Date.now();
  await putQr(table, id, QR_TEXT, 60_000);
  await updateAccountStatus(table, id, { status: 'connecting', hasQR: true });
  return { id, before };
}

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${api.url}${path}`, { headers });

describe('GET /accounts/:accountId/qr', () => {
  it('JSON: 200 {ok, qr, expiresAt} with the raw QR text and its expiry in Unix ms', async () => {
    const { id, before } = await accountShowingQr();
    const { status, body } = await api.call('GET', `/accounts/${id}/qr`);
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, qr: QR_TEXT, expiresAt: expect.any(Number) });
    expect(body.expiresAt).toBeGreaterThanOrEqual(before + 60_000);
    expect(body.expiresAt).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it('PNG by Accept: image/png or ?format=png; decoded, it is the code of the QR text', async () => {
    const { id } = await accountShowingQr();
    for (const response of [await get(`/accounts/${id}/qr`, { accept: 'image/png' }), await get(`/accounts/${id}/qr?format=png`)]) {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/png');
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(modulesOfPng(Buffer.from(await response.arrayBuffer()))).toEqual(qrMatrix(QR_TEXT));
    }
  });

  it('SVG by ?format=svg, which wins over Accept', async () => {
    const { id } = await accountShowingQr();
    const response = await get(`/accounts/${id}/qr?format=svg`, { accept: 'image/png' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    const matrix = qrMatrix(QR_TEXT);
    expect(modulesOfSvg(await response.text(), matrix.length)).toEqual(matrix);
    const json = await get(`/accounts/${id}/qr?format=json`, { accept: 'image/png' });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('unknown format: 400 format must be json, png or svg', async () => {
    const { id } = await accountShowingQr();
    expect(await api.call('GET', `/accounts/${id}/qr?format=gif`)).toMatchObject({
      status: 400,
      body: { ok: false, error: 'format must be json, png or svg' },
    });
  });

  it('nothing to scan: 404 No QR code available (first QR not there yet, expired, withdrawn, connected)', async () => {
    const notFound = { status: 404, body: { ok: false, error: 'No QR code available' } };
    const fresh = `qr${Date.now().toString(36)}${counter++}`;
    await api.call('POST', '/accounts', { id: fresh });
    expect(await api.call('GET', `/accounts/${fresh}/qr`)).toMatchObject(notFound);
    expect((await get(`/accounts/${fresh}/qr?format=png`)).headers.get('content-type')).toMatch(/^application\/json/);

    const expired = await accountShowingQr();
    await putQr(table, expired.id, QR_TEXT, 20_000, Date.now() - 21_000);
    expect(await api.call('GET', `/accounts/${expired.id}/qr`)).toMatchObject(notFound);

    const withdrawn = await accountShowingQr();
    await clearQr(table, withdrawn.id);
    expect(await api.call('GET', `/accounts/${withdrawn.id}/qr`)).toMatchObject(notFound);

    const connected = await accountShowingQr();
    await updateAccountStatus(table, connected.id, { status: 'connected' });
    expect(await api.call('GET', `/accounts/${connected.id}/qr`)).toMatchObject(notFound);
  });

  it('unknown account: 404 Account not found', async () => {
    expect(await api.call('GET', '/accounts/nosuchaccount/qr')).toMatchObject({
      status: 404,
      body: { ok: false, error: 'Account not found' },
    });
  });

  it('deleting the account removes its QR', async () => {
    const { id } = await accountShowingQr();
    expect((await api.call('DELETE', `/accounts/${id}`)).status).toBe(200);
    expect((await api.call('POST', '/accounts', { id })).status).toBe(201);
    await updateAccountStatus(table, id, { status: 'connecting', hasQR: true });
    expect(await api.call('GET', `/accounts/${id}/qr`)).toMatchObject({ status: 404, body: { error: 'No QR code available' } });
  });

  it('is in the OpenAPI document with its three media types', async () => {
    const { body } = await api.call('GET', '/openapi.json');
    const route = (body.paths as Record<string, { get?: { summary?: string; responses: Record<string, { content?: object }> } }>)[
      '/accounts/{accountId}/qr'
    ]?.get;
    expect(route?.summary).toMatch(/\w{3}/);
    expect(Object.keys(route?.responses['200']?.content ?? {}).sort()).toEqual(['application/json', 'image/png', 'image/svg+xml']);
  });
});
