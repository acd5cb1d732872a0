import type { BinaryNode } from '@whiskeysockets/baileys';
import type { Network } from '../network/network.js';
import type { Account, PhoneInboxEntry } from '../network/model.js';
import { parseGroupJid } from '../groups/model.js';
import { sendGroupReceipt } from '../groups/receipts.js';

const PHONE_RECEIPT_TYPES = ['read', 'played'] as const;
export type PhoneReceiptType = (typeof PHONE_RECEIPT_TYPES)[number];

export type ReceivedLookup = { entries: PhoneInboxEntry[] } | { error: string; status: 400 | 404 };

/**
 * The messages of `messageIds` among those the phone received (its inbox), from `chatJid` (a
 * contact, or a group) when given. `played` applies to audio (voice notes) only, as on WhatsApp.
 */
export function findReceived(
  network: Network,
  inbox: readonly PhoneInboxEntry[],
  messageIds: readonly string[],
  type: PhoneReceiptType,
  chatJid?: string,
): ReceivedLookup {
  const group = parseGroupJid(chatJid) !== undefined ? chatJid : undefined;
  const chat = chatJid === undefined || group ? undefined : network.accounts.resolve(chatJid)?.account;
  if (chatJid !== undefined && !chat && !(group && network.groups.get(parseGroupJid(group) ?? ''))) {
    return { error: 'unknown chat', status: 404 };
  }
  const inChat = (entry: PhoneInboxEntry) =>
    group ? entry.chat === group : !chat || (entry.chat === undefined && network.accounts.resolve(entry.from)?.account === chat);
  const byId = new Map(inbox.map((entry) => [entry.id, entry]));
  const entries: PhoneInboxEntry[] = [];
  for (const id of messageIds) {
    const entry = byId.get(id);
    if (!entry || !inChat(entry)) {
      return { error: `unknown message: ${id}`, status: 404 };
    }
    if (type === 'played' && entry.type !== 'audio') return { error: `played applies to audio messages only: ${id}`, status: 400 };
    entries.push(entry);
  }
  return { entries };
}

/**
 * The phone (device 0) read or played messages it received: each sender hears it once per
 * message and type (`<receipt type="read|played">`, as WhatsApp forwards them), on the device
 * that sent it, or on all its devices once that is forgotten; for a group message, once per
 * member, on the sending device, naming the member as `participant`. Answers the ids receipted now.
 */
export function sendPhoneReceipts(network: Network, phone: Account, entries: readonly PhoneInboxEntry[], type: PhoneReceiptType): string[] {
  const t = String(Math.floor(Date.now() / 1000));
  const receipted: string[] = [];
  for (const { id, from, chat } of entries) {
    const group = chat ? network.groups.get(parseGroupJid(chat) ?? '') : undefined;
    if (chat) {
      // As a member's device does: `<receipt to=G participant=SENDER type>`, told the sender once per member.
      if (group && sendGroupReceipt(network, group, id, phone, 0, { attrs: { type } })) receipted.push(id);
      continue;
    }
    const sender = network.accounts.resolve(from)?.account;
    if (!sender || !network.firstReceipt(id, type)) continue;
    const origin = network.originOf(id);
    const devices = origin?.phone === sender.phone ? [origin.device] : [...sender.devices.keys()];
    const receipt: BinaryNode = { tag: 'receipt', attrs: { from: network.jidOf(phone), id, t, type } };
    for (const device of devices) if (device !== 0) network.deliver(sender, device, receipt);
    receipted.push(id);
  }
  return receipted;
}
