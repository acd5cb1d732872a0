import type { BinaryNode } from '@whiskeysockets/baileys';
import type { Network } from '../network/network.js';
import type { Account, CompanionDevice } from '../network/model.js';
import type { Phones } from '../phone/phone.js';

/** What a stanza handler sees: the network, the phones, and the logged-in device it serves. */
export interface StanzaContext {
  network: Network;
  phones: Phones;
  account: Account;
  device: number;
  companion: CompanionDevice;
  send(node: BinaryNode): void;
  /** Called once pre-keys are in place and the client went active: offline backlog and bootstrap. */
  onActive(): void;
  /** Ends this connection (after a logout). */
  close(): void;
}

export const SERVER_JID = 's.whatsapp.net';

export function iqResult(iq: BinaryNode, content?: BinaryNode[]): BinaryNode {
  return {
    tag: 'iq',
    attrs: { from: iq.attrs.to ?? SERVER_JID, type: 'result', id: iq.attrs.id ?? '' },
    ...(content ? { content } : {}),
  };
}

export function iqError(iq: BinaryNode, code: number, text: string): BinaryNode {
  return {
    tag: 'iq',
    attrs: { from: iq.attrs.to ?? SERVER_JID, type: 'error', id: iq.attrs.id ?? '' },
    content: [{ tag: 'error', attrs: { code: String(code), text } }],
  };
}

export const children = (node: BinaryNode | undefined): BinaryNode[] => (node && Array.isArray(node.content) ? node.content : []);

export const child = (node: BinaryNode | undefined, tag: string): BinaryNode | undefined => children(node).find((c) => c.tag === tag);

export const bytes = (node: BinaryNode | undefined): Buffer | undefined =>
  node?.content instanceof Uint8Array ? Buffer.from(node.content) : undefined;

/** Big-endian unsigned integer of 1-4 bytes (registration ids, key ids). */
export const uintBE = (buf: Buffer | undefined): number | undefined =>
  buf && buf.length >= 1 && buf.length <= 4 ? buf.readUIntBE(0, buf.length) : undefined;

export const encodeUintBE = (value: number, length: number): Buffer => {
  const out = Buffer.alloc(length);
  out.writeUIntBE(value, 0, length);
  return out;
};
