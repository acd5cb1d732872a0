import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proto } from '@whiskeysockets/baileys';
import { startSandbox, type RunningSandbox } from '../../sandbox/index.js';
import { createPhone, linkClient, type SandboxClient } from './support/sandbox-client.js';

const { Status } = proto.WebMessageInfo;
const PHONE = '15550012002';

describe('sandbox: the phone reads and plays messages (read / played receipts)', () => {
  let sandbox: RunningSandbox;
  let alice: SandboxClient;

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${sandbox.descriptor.controlUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  /** Sends from Alice to the phone and waits until the phone holds it (delivered). */
  const sendToPhone = async (content: Parameters<NonNullable<SandboxClient['sock']>['sendMessage']>[1]) => {
    const sent = await alice.sock!.sendMessage(`${PHONE}@s.whatsapp.net`, content);
    const id = sent!.key.id!;
    await alice.waitForStatus(id, Status.DELIVERY_ACK);
    return id;
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    alice = await linkClient(sandbox, '15550012001');
    await createPhone(sandbox, PHONE);
  });

  afterAll(async () => {
    await alice?.stop();
    await sandbox?.stop();
  });

  it('POST /phones/:phone/read: the sender sees its message read, once', async () => {
    const id = await sendToPhone({ text: 'read me' });
    expect(await post(`/phones/${PHONE}/read`, { messageIds: [id], chatJid: alice.userJid })).toEqual({
      status: 200,
      json: { ok: true, receipted: [id] },
    });
    await alice.waitForStatus(id, Status.READ);
    expect(await post(`/phones/${PHONE}/read`, { messageIds: [id] })).toEqual({ status: 200, json: { ok: true, receipted: [] } });
  });

  it('POST /phones/:phone/played: the sender sees its voice note played', async () => {
    const id = await sendToPhone({ audio: randomBytes(5_000), mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: 2 });
    expect((await post(`/phones/${PHONE}/read`, { messageIds: [id] })).json).toEqual({ ok: true, receipted: [id] });
    await alice.waitForStatus(id, Status.READ);
    expect(await post(`/phones/${PHONE}/played`, { messageIds: [id] })).toEqual({ status: 200, json: { ok: true, receipted: [id] } });
    await alice.waitForStatus(id, Status.PLAYED);
  });

  it('answers bad requests with a JSON error and sends nothing', async () => {
    const id = await sendToPhone({ text: 'not audio' });
    const cases: [unknown, number][] = [
      [{ messageIds: [] }, 400],
      [{ chatJid: alice.userJid }, 400],
      [{ messageIds: ['NOSUCHMESSAGE'] }, 404],
      [{ messageIds: [id], chatJid: '19999999999@s.whatsapp.net' }, 404],
      [{ messageIds: [id], chatJid: `${PHONE}@s.whatsapp.net` }, 404],
    ];
    for (const [body, status] of cases) {
      const res = await post(`/phones/${PHONE}/read`, body);
      expect(res.status).toBe(status);
      expect(typeof res.json.error).toBe('string');
    }
    const played = await post(`/phones/${PHONE}/played`, { messageIds: [id] });
    expect(played.status).toBe(400);
    expect(played.json.error).toMatch(/audio/);
    expect((await post('/phones/19999999999/read', { messageIds: [id] })).status).toBe(404);
    // None of the refused calls marked the message: the first real read still sends a receipt.
    expect(await post(`/phones/${PHONE}/read`, { messageIds: [id] })).toEqual({ status: 200, json: { ok: true, receipted: [id] } });
  });

  it('logs no Baileys errors', () => {
    expect(alice.unexpectedErrors).toEqual([]);
  });
});
