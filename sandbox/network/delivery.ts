import type { BinaryNode } from '@whiskeysockets/baileys';
import type { CompanionDevice } from './model.js';

/**
 * Stanzas kept for one device, queued while offline or sent but not receipted; beyond this the
 * oldest are dropped, a tenth of the limit at a time.
 */
export const KEPT_STANZA_LIMIT = 10_000;
const DROP_BATCH = KEPT_STANZA_LIMIT / 10;

/** Like WhatsApp, the network answers for a message until the device receipts or acks it. */
export const awaitsReceipt = (node: BinaryNode): boolean => node.tag === 'message' && !!node.attrs.id;

/** Records a message stanza written to the device's connection. */
export function noteSent(companion: CompanionDevice, node: BinaryNode): void {
  const id = node.attrs.id ?? '';
  const copies = companion.unreceipted.get(id);
  if (copies) copies.push(node);
  else companion.unreceipted.set(id, [node]);
}

/**
 * A receipt from the device (any type but `retry`): it has the message, every copy is done.
 * Answers whether anything was pending.
 */
export function noteReceipt(companion: CompanionDevice, ids: readonly string[]): boolean {
  let changed = false;
  for (const id of ids) changed = companion.unreceipted.delete(id) || changed;
  return changed;
}

/**
 * An `<ack class="message">` (with or without an error) closes one copy: the device is done
 * with that stanza, and a retry receipt it sent before is what brings the message again.
 */
export function noteAck(companion: CompanionDevice, id: string): boolean {
  const copies = companion.unreceipted.get(id);
  if (!copies) return false;
  copies.shift();
  if (!copies.length) companion.unreceipted.delete(id);
  return true;
}

/** Unreceipted stanzas (a device's `unreceipted`), oldest first. */
export function unreceiptedInOrder(unreceipted: CompanionDevice['unreceipted']): BinaryNode[] {
  return [...unreceipted.values()].flat();
}

/** Puts the unreceipted stanzas back at the front of the offline queue (their connection is gone). */
export function requeueUnreceipted(companion: CompanionDevice): boolean {
  if (!companion.unreceipted.size) return false;
  companion.queue = [...unreceiptedInOrder(companion.unreceipted), ...companion.queue];
  companion.unreceipted.clear();
  return true;
}

/**
 * Keeps the device within KEPT_STANZA_LIMIT (unreceipted messages count once per id), dropping
 * the oldest first: unreceipted ones, then queued ones. Answers how many were dropped.
 */
export function enforceKeptLimit(companion: CompanionDevice): number {
  if (companion.queue.length + companion.unreceipted.size <= KEPT_STANZA_LIMIT) return 0;
  let dropped = 0;
  for (const id of companion.unreceipted.keys()) {
    if (dropped >= DROP_BATCH) break;
    companion.unreceipted.delete(id);
    dropped++;
  }
  if (dropped < DROP_BATCH) dropped += companion.queue.splice(0, DROP_BATCH - dropped).length;
  return dropped;
}
