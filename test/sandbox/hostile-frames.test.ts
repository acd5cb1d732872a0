import { randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import WebSocket from 'ws';
import {
  Curve,
  DEFAULT_CONNECTION_CONFIG,
  NOISE_WA_HEADER,
  generateRegistrationNode,
  encodeBinaryNode,
  getBinaryNodeChild,
  initAuthCreds,
  makeNoiseHandler,
  proto,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { trustSandboxRoot } from '../../sandbox/client.js';
import type { RunningSandbox } from '../../sandbox/index.js';
import { withLinkedPair } from './support/linked-pair.js';

/**
 * A raw client built from Baileys' exported Noise handler: it completes the handshake as a
 * registering device and then misbehaves, while a real client keeps working.
 */
async function handshakenSocket(sandbox: RunningSandbox) {
  trustSandboxRoot(sandbox.descriptor);
  const creds = initAuthCreds();
  const ephemeral = Curve.generateKeyPair();
  const noise = makeNoiseHandler({ keyPair: ephemeral, NOISE_HEADER: NOISE_WA_HEADER, logger: pino({ level: 'silent' }) });
  const ws = new WebSocket(sandbox.descriptor.wsUrl);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  const frames: (Uint8Array | BinaryNode)[] = [];
  let notify: (() => void) | undefined;
  ws.on('message', (data: Buffer) => {
    void noise.decodeFrame(data, (frame) => {
      frames.push(frame);
      notify?.();
    });
  });
  const nextFrame = () =>
    new Promise<Uint8Array | BinaryNode>((resolve) => {
      const take = () => {
        const frame = frames.shift();
        if (frame) resolve(frame);
        else notify = take;
      };
      take();
    });

  ws.send(noise.encodeFrame(proto.HandshakeMessage.encode({ clientHello: { ephemeral: ephemeral.public } }).finish()));
  const hello = proto.HandshakeMessage.decode((await nextFrame()) as Uint8Array);
  const keyEnc = noise.processHandshake(hello, creds.noiseKey);
  const payload = generateRegistrationNode(creds, { ...DEFAULT_CONNECTION_CONFIG, version: [2, 3000, 0] } as Parameters<
    typeof generateRegistrationNode
  >[1]);
  const payloadEnc = noise.encrypt(proto.ClientPayload.encode(payload).finish());
  ws.send(noise.encodeFrame(proto.HandshakeMessage.encode({ clientFinish: { static: keyEnc, payload: payloadEnc } }).finish()));
  await noise.finishInit();
  const pairDevice = (await nextFrame()) as BinaryNode;
  const send = (node: BinaryNode) => ws.send(noise.encodeFrame(encodeBinaryNode(node)));
  return { ws, closed, pairDevice, creds, send, nextNode: async () => (await nextFrame()) as BinaryNode };
}

const it = withLinkedPair({ alice: { phone: '15550010001' }, bob: { phone: '15550010002' } });

describe('sandbox: hostile frames close one connection only', () => {
  it('a garbage transport frame after the handshake closes that connection; other clients keep working', async ({
    linked: { sandbox, alice, bob },
  }) => {
    const raw = await handshakenSocket(sandbox);
    expect(raw.pairDevice.tag).toBe('iq');
    const garbage = randomBytes(64);
    raw.ws.send(Buffer.concat([Buffer.from([0, 0, garbage.length]), garbage]));
    await raw.closed;

    const sent = await alice.sock!.sendMessage(bob.userJid, { text: 'still here' });
    await bob.waitForMessage((m) => m.key.id === sent!.key.id, 'a message after the hostile client');
    expect(alice.closeCodes.filter((c) => c !== 515)).toEqual([]);
  });

  it('malformed link-by-code iqs get an iq error and the connection keeps waiting for a link', async ({ linked: { sandbox } }) => {
    const raw = await handshakenSocket(sandbox);
    const linkCodeIq = (id: string, attrs: Record<string, string>, content: BinaryNode[] = []): BinaryNode => ({
      tag: 'iq',
      attrs: { id, to: 's.whatsapp.net', type: 'set', xmlns: 'md' },
      content: [{ tag: 'link_code_companion_reg', attrs, content }],
    });
    const hello = (wrapped: Buffer): BinaryNode[] => [
      { tag: 'link_code_pairing_wrapped_companion_ephemeral_pub', attrs: {}, content: wrapped },
      { tag: 'companion_server_auth_key_pub', attrs: {}, content: raw.creds.noiseKey.public },
    ];
    const cases: [BinaryNode, string][] = [
      [linkCodeIq('short', { jid: '15550010009@s.whatsapp.net', stage: 'companion_hello' }, hello(randomBytes(10))), '400'],
      [linkCodeIq('nojid', { stage: 'companion_hello' }, hello(randomBytes(80))), '400'],
      [linkCodeIq('early', { stage: 'companion_finish' }), '404'],
      [linkCodeIq('stage', { stage: 'primary_hello' }), '400'],
    ];
    for (const [iq, code] of cases) {
      raw.send(iq);
      const answer = await raw.nextNode();
      expect(answer.attrs).toMatchObject({ id: iq.attrs.id, type: 'error' });
      expect(getBinaryNodeChild(answer, 'error')?.attrs.code).toBe(code);
    }

    raw.send(linkCodeIq('good', { jid: '15550010009@s.whatsapp.net', stage: 'companion_hello' }, hello(randomBytes(80))));
    const accepted = await raw.nextNode();
    expect(accepted.attrs).toMatchObject({ id: 'good', type: 'result' });
    expect(getBinaryNodeChild(getBinaryNodeChild(accepted, 'link_code_companion_reg'), 'link_code_pairing_ref')).toBeDefined();
    raw.ws.close();
    await raw.closed;
  });
});
