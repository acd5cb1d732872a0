import { describe, expect, it } from 'vitest';
import type { BinaryNode } from '@whiskeysockets/baileys';
import type { CompanionDevice } from '../../../sandbox/network/model.js';
import {
  enforceKeptLimit,
  KEPT_STANZA_LIMIT,
  noteAck,
  noteReceipt,
  noteSent,
  requeueUnreceipted,
} from '../../../sandbox/network/delivery.js';

const message = (id: string, copy = 0): BinaryNode => ({ tag: 'message', attrs: { id, copy: String(copy) } });
const ids = (nodes: BinaryNode[]) => nodes.map((n) => `${n.attrs.id}/${n.attrs.copy}`);

function device(): CompanionDevice {
  return {
    device: 1,
    keyIndex: 1,
    noiseKey: Buffer.alloc(32),
    identityKey: Buffer.alloc(32),
    registrationId: 1,
    signedPreKey: { keyId: 1, publicKey: Buffer.alloc(32), signature: Buffer.alloc(64) },
    preKeys: new Map(),
    platform: 'test',
    linkedAt: 0,
    bootstrapped: true,
    queue: [],
    unreceipted: new Map(),
  };
}

describe('sandbox delivery bookkeeping', () => {
  it('an ack closes one copy of a message, a receipt every copy', () => {
    const d = device();
    noteSent(d, message('A', 0));
    noteSent(d, message('B', 0));
    noteSent(d, message('A', 1));
    expect(noteAck(d, 'A')).toBe(true);
    expect(ids([...d.unreceipted.values()].flat())).toEqual(['A/1', 'B/0']);
    expect(noteReceipt(d, ['A', 'unknown'])).toBe(true);
    expect(ids([...d.unreceipted.values()].flat())).toEqual(['B/0']);
    expect(noteReceipt(d, ['unknown'])).toBe(false);
    expect(noteAck(d, 'unknown')).toBe(false);
  });

  it('unreceipted stanzas go back in front of the queue, in sending order', () => {
    const d = device();
    d.queue.push(message('Q'));
    noteSent(d, message('A'));
    noteSent(d, message('B'));
    expect(requeueUnreceipted(d)).toBe(true);
    expect(ids(d.queue)).toEqual(['A/0', 'B/0', 'Q/0']);
    expect(d.unreceipted.size).toBe(0);
    expect(requeueUnreceipted(d)).toBe(false);
  });

  it('beyond the limit the oldest are dropped a tenth at a time, unreceipted before queued', () => {
    const d = device();
    for (let i = 0; i < 600; i++) noteSent(d, message(`U${i}`));
    for (let i = 0; i < KEPT_STANZA_LIMIT - 600; i++) d.queue.push(message(`Q${i}`));
    expect(enforceKeptLimit(d)).toBe(0);
    d.queue.push(message('newest'));
    expect(enforceKeptLimit(d)).toBe(KEPT_STANZA_LIMIT / 10);
    expect(d.unreceipted.size).toBe(0);
    expect(d.queue[0]!.attrs.id).toBe(`Q${KEPT_STANZA_LIMIT / 10 - 600}`);
    expect(d.queue.at(-1)!.attrs.id).toBe('newest');
    expect(d.queue.length + d.unreceipted.size).toBe(KEPT_STANZA_LIMIT + 1 - KEPT_STANZA_LIMIT / 10);
  });
});
