import type { BinaryNode } from '@whiskeysockets/baileys';
import type { Account } from '../network/model.js';
import type { Network } from '../network/network.js';
import { children, type StanzaContext } from './context.js';
import { groupJid, parseGroupJid } from '../groups/model.js';
import { memberJid } from '../groups/nodes.js';

/**
 * Presence and chat states (docs/sandbox-protocol.md, "Presence"). Neither is stored or queued:
 * like WhatsApp, they reach the devices online now or nobody.
 *
 * - `<chatstate to=B><composing/>|<composing media=audio/>|<paused/></chatstate>` goes to B's
 *   online devices as `<chatstate from=A>` with the same child (Baileys: presence.update). To a
 *   group the sender is in, it goes to the other members' online devices as
 *   `<chatstate from=G@g.us participant=A>`.
 * - `<presence type=subscribe to=B/>` subscribes the device's account to B's presence; it is
 *   answered with B's last presence when B has announced one.
 * - `<presence type=available|unavailable name=.../>` (no `to`) is kept as the account's
 *   presence and sent as `<presence from=A type=.../>` to the online devices of its subscribers.
 */
interface PresenceState {
  /** Last announced presence per phone. */
  last: Map<string, 'available' | 'unavailable'>;
  /** Phone -> phones subscribed to it. */
  subscribers: Map<string, Set<string>>;
}

const states = new WeakMap<Network, PresenceState>();

function stateOf(network: Network): PresenceState {
  let state = states.get(network);
  if (!state) {
    state = { last: new Map(), subscribers: new Map() };
    states.set(network, state);
  }
  return state;
}

/** Sends to every companion of `account` that is online now; nothing is kept for later. */
function sendToOnline(network: Network, account: Account, node: BinaryNode): void {
  for (const device of account.devices.keys()) network.connectionOf(account.phone, device)?.send(node);
}

export function handleChatstate(ctx: StanzaContext, node: BinaryNode): void {
  const [state] = children(node);
  const group = ctx.network.groups.get(parseGroupJid(node.attrs.to) ?? '');
  if (group) {
    if (!state || !group.participants.has(ctx.account.phone)) return;
    const attrs = { from: groupJid(group.id), participant: memberJid(ctx.network, ctx.account.phone) };
    for (const phone of group.participants.keys()) {
      const member = ctx.network.accounts.get(phone);
      if (member && member !== ctx.account) sendToOnline(ctx.network, member, { tag: 'chatstate', attrs, content: [state] });
    }
    return;
  }
  const target = ctx.network.accounts.resolve(node.attrs.to);
  if (!target || !state || target.account === ctx.account) return;
  const from = ctx.network.jidOf(ctx.account, 0, target.server === 'lid');
  sendToOnline(ctx.network, target.account, { tag: 'chatstate', attrs: { from }, content: [state] });
}

export function handlePresence(ctx: StanzaContext, node: BinaryNode): void {
  const { network, account } = ctx;
  const state = stateOf(network);
  const type = node.attrs.type;
  if (type === 'subscribe') {
    const target = network.accounts.resolve(node.attrs.to);
    if (!target) return;
    let subscribers = state.subscribers.get(target.account.phone);
    if (!subscribers) {
      subscribers = new Set();
      state.subscribers.set(target.account.phone, subscribers);
    }
    subscribers.add(account.phone);
    const last = state.last.get(target.account.phone);
    if (last) ctx.send({ tag: 'presence', attrs: { from: network.jidOf(target.account, 0, target.server === 'lid'), type: last } });
    return;
  }
  if (type !== 'available' && type !== 'unavailable') return;
  state.last.set(account.phone, type);
  for (const phone of state.subscribers.get(account.phone) ?? []) {
    const subscriber = network.accounts.get(phone);
    if (subscriber) sendToOnline(network, subscriber, { tag: 'presence', attrs: { from: network.jidOf(account), type } });
  }
}
