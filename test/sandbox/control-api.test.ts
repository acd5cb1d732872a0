import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startSandbox, type RunningSandbox } from '../../sandbox/index.js';

describe('sandbox: control API input and hostile frames', () => {
  let sandbox: RunningSandbox;
  const call = async (method: string, path: string, body?: string) => {
    const res = await fetch(`${sandbox.descriptor.controlUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body }),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
  });
  afterAll(async () => {
    await sandbox.stop();
  });

  it('GET /health answers ok', async () => {
    expect(await call('GET', '/health')).toMatchObject({ status: 200, json: { ok: true } });
  });

  it('POST /phones creates a number with a LID, then answers 200 for the same number', async () => {
    const created = await call('POST', '/phones', JSON.stringify({ phone: '15550007001', pushName: 'Carol' }));
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ phone: '15550007001', jid: '15550007001@s.whatsapp.net', pushName: 'Carol' });
    expect(created.json.lid).toMatch(/^\d+@lid$/);
    expect((await call('POST', '/phones', JSON.stringify({ phone: '15550007001' }))).status).toBe(200);
  });

  it.each([
    ['malformed JSON', 'POST', '/phones', '{nope'],
    ['non-digit phone', 'POST', '/phones', JSON.stringify({ phone: '+1 555' })],
    ['malformed QR', 'POST', '/scan', JSON.stringify({ phone: '15550007001', qr: 'not a qr' })],
    ['missing text', 'POST', '/phones/15550007001/messages', JSON.stringify({ to: '15550007001@s.whatsapp.net' })],
    ['unknown kick kind', 'POST', '/kick', JSON.stringify({ phone: '15550007001', device: 1, kind: 'explode' })],
    ['a minimum that is not a version', 'PUT', '/version', JSON.stringify({ minimum: '2.3000' })],
    ['a current version that is not one', 'PUT', '/version', JSON.stringify({ current: 'latest' })],
  ])('%s: 400 with a JSON error', async (_name, method, path, body) => {
    const res = await call(method, path, body);
    expect(res.status).toBe(400);
    expect(typeof res.json.error).toBe('string');
  });

  it('calls: placed, listed for both phones, ended once; unknown phones, recipients and calls are 404, a bad body 400', async () => {
    await call('POST', '/phones', JSON.stringify({ phone: '15550007101' }));
    await call('POST', '/phones', JSON.stringify({ phone: '15550007102' }));
    const placed = await call('POST', '/phones/15550007101/call', JSON.stringify({ to: '15550007102', video: true }));
    expect(placed).toMatchObject({ status: 200, json: { ok: true, callId: expect.stringMatching(/^[0-9A-F]{32}$/) } });
    const callId = String(placed.json.callId);
    const listed = { callId, from: '15550007101', to: '15550007102', video: true, status: 'ringing', startedAt: expect.any(Number) };
    expect((await call('GET', '/phones/15550007101/calls')).json).toEqual({ calls: [listed] });
    expect((await call('GET', '/phones/15550007102/calls')).json).toEqual({ calls: [listed] });
    // Only the caller hangs up its call.
    expect((await call('POST', '/phones/15550007102/call/end', JSON.stringify({ callId }))).status).toBe(404);
    expect(await call('POST', '/phones/15550007101/call/end', JSON.stringify({ callId }))).toMatchObject({
      status: 200,
      json: { ok: true, call: { ...listed, status: 'missed', endedAt: expect.any(Number) } },
    });
    expect(await call('POST', '/phones/15550007101/call/end', JSON.stringify({ callId }))).toMatchObject({
      status: 409,
      json: { error: 'call already ended (missed)' },
    });
    expect((await call('POST', '/phones/15550007101/call/end', JSON.stringify({ callId: 'NOPE' }))).status).toBe(404);
    expect((await call('POST', '/phones/15550007101/call', JSON.stringify({ to: '15550007999' }))).status).toBe(404);
    expect((await call('POST', '/phones/15550007999/call', JSON.stringify({ to: '15550007102' }))).status).toBe(404);
    expect((await call('POST', '/phones/15550007101/call', JSON.stringify({ to: '15550007102', video: 'yes' }))).status).toBe(400);
    expect((await call('POST', '/phones/15550007101/call/end', JSON.stringify({}))).status).toBe(400);
  });

  it('client versions: /sw.js carries the current revision as WhatsApp Web does; PUT /version moves it and the minimum', async () => {
    const before = await call('GET', '/version');
    expect(before.json).toMatchObject({ minimum: null, current: expect.stringMatching(/^2\.3000\.\d+$/) });
    const moved = await call('PUT', '/version', JSON.stringify({ current: '2.3000.1999999999', minimum: '2.3000.1999999000' }));
    expect(moved.json).toMatchObject({ current: '2.3000.1999999999', minimum: '2.3000.1999999000' });
    const sw = await fetch(`${sandbox.descriptor.controlUrl}/sw.js`);
    expect(sw.headers.get('content-type')).toMatch(/javascript/);
    expect(await sw.text()).toContain('\\"client_revision\\":1999999999');
    expect(sandbox.descriptor.versionUrl).toBe(`${sandbox.descriptor.controlUrl}/sw.js`);
    expect((await call('PUT', '/version', JSON.stringify({ minimum: null }))).json).toMatchObject({ minimum: null, swJsServed: 1 });
  });

  it.each([
    ['unknown phone scanning', 'POST', '/scan', JSON.stringify({ phone: '19999999999', qr: 'x' })],
    [
      'QR nobody shows',
      'POST',
      '/scan',
      JSON.stringify({
        phone: '15550007001',
        qr: `https://wa.me/settings/linked_devices#ref,${'A'.repeat(43)}=,${'A'.repeat(43)}=,${'A'.repeat(43)}=,1`,
      }),
    ],
    ['messages of an unknown phone', 'GET', '/phones/19999999999/messages', undefined],
    [
      'send to an unknown recipient',
      'POST',
      '/phones/15550007001/messages',
      JSON.stringify({ to: '19999999999@s.whatsapp.net', text: 'hi' }),
    ],
    ['kick of an unknown device', 'POST', '/kick', JSON.stringify({ phone: '15550007001', device: 7, kind: 'end' })],
  ])('%s: 404 with a JSON error', async (_name, method, path, body) => {
    const res = await call(method, path, body);
    expect(res.status).toBe(404);
    expect(typeof res.json.error).toBe('string');
  });

  it('POST /kick without a device on a phone with none linked: 200, nothing kicked', async () => {
    const res = await call('POST', '/kick', JSON.stringify({ phone: '15550007001', kind: 'forbidden' }));
    expect(res).toEqual({ status: 200, json: { ok: true, kicked: false, unlinked: false, devices: [] } });
  });

  it('a garbage protocol frame closes that connection only', async () => {
    const ws = new WebSocket(sandbox.descriptor.wsUrl);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const closed = new Promise((resolve) => ws.once('close', resolve));
    ws.send(Buffer.from([0x57, 0x41, 6, 3, 0, 0, 5, 1, 2, 3, 4, 5]));
    await closed;
    expect((await call('GET', '/health')).status).toBe(200);
  });
});
