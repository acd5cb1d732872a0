import { randomBytes } from 'node:crypto';
import type { BinaryNode } from '@whiskeysockets/baileys';
import { pnJid } from './jids.js';
import type { Account } from './model.js';
import type { Network } from './network.js';

/**
 * Voice and video calls from a phone to an account, as far as WhatsApp's signalling goes
 * (docs/sandbox-protocol.md, Calls; no media flows). A call rings on every companion device of
 * the callee (`<call><offer/></call>`, queued for a device that is offline, as WhatsApp does);
 * a device declines it with `<call><reject/></call>`, which WhatsApp acks and tells the callee's
 * other devices; the caller can end it unanswered (`<terminate reason="timeout"/>`). Kept in
 * memory for the control API to report (GET /phones/:phone/calls), not persisted.
 */
export interface SandboxCall {
  callId: string;
  /** Caller and callee phone numbers. */
  from: string;
  to: string;
  video: boolean;
  status: 'ringing' | 'rejected' | 'missed';
  /** Unix ms. */
  startedAt: number;
  endedAt?: number;
  /** The device JID that declined it. */
  rejectedBy?: string;
}

/** Calls kept for the control API; the oldest go first. */
const CALLS_LIMIT = 1_000;

export class CallError extends Error {
  constructor(
    message: string,
    readonly status: 404 | 409,
  ) {
    super(message);
  }
}

const seconds = () => String(Math.floor(Date.now() / 1000));
const stanzaId = () => randomBytes(8).toString('hex').toUpperCase();

export class Calls {
  private readonly calls = new Map<string, SandboxCall>();

  constructor(private readonly network: Network) {}

  /** `caller`'s phone calls `callee`: every companion device of the callee gets the offer. */
  place(caller: Account, callee: Account, video: boolean): SandboxCall {
    // WhatsApp's call ids: 32 upper-case hex digits.
    const call: SandboxCall = {
      callId: randomBytes(16).toString('hex').toUpperCase(),
      from: caller.phone,
      to: callee.phone,
      video,
      status: 'ringing',
      startedAt: Date.now(),
    };
    this.remember(call);
    const media: BinaryNode[] = [
      { tag: 'audio', attrs: { enc: 'opus', rate: '16000' } },
      { tag: 'audio', attrs: { enc: 'opus', rate: '8000' } },
      ...(video
        ? [{ tag: 'video', attrs: { enc: 'vp8', dec: 'vp8', orientation: '0', screen_width: '1080', screen_height: '1920' } }]
        : []),
    ];
    this.toCallee(call, caller, undefined, { tag: 'offer', attrs: this.callAttrs(call, caller), content: media });
    return call;
  }

  /** The caller hangs up before anyone answered: the call is missed, the callee's devices get a terminate. */
  end(caller: Account, callId: string): SandboxCall {
    const call = this.calls.get(callId);
    if (!call || call.from !== caller.phone) throw new CallError('unknown call', 404);
    if (call.status !== 'ringing') throw new CallError(`call already ended (${call.status})`, 409);
    call.status = 'missed';
    call.endedAt = Date.now();
    this.toCallee(call, caller, undefined, { tag: 'terminate', attrs: { ...this.callAttrs(call, caller), reason: 'timeout' } });
    return call;
  }

  /**
   * A device of `account` sent a `<call>` stanza: a `<reject>` declines the ringing call it
   * names (its other devices stop ringing). Every such stanza is acked with its id, which
   * Baileys' `rejectCall` waits for (it is sent through `query`).
   */
  fromDevice(account: Account, device: number, node: BinaryNode, send: (node: BinaryNode) => void): void {
    const [action] = Array.isArray(node.content) ? node.content : [];
    const callId = action?.attrs['call-id'];
    const call = callId ? this.calls.get(callId) : undefined;
    if (action?.tag === 'reject' && call && call.to === account.phone && call.status === 'ringing') {
      call.status = 'rejected';
      call.endedAt = Date.now();
      call.rejectedBy = pnJid(account.phone, device);
      const caller = this.network.accounts.get(call.from);
      if (caller) this.toCallee(call, caller, device, { tag: 'reject', attrs: this.callAttrs(call, caller) });
    }
    send({
      tag: 'ack',
      attrs: {
        id: node.attrs.id ?? '',
        class: 'call',
        from: node.attrs.to ?? pnJid(account.phone),
        ...(action ? { type: action.tag } : {}),
      },
    });
  }

  /** The calls `phone` made or received, oldest first. */
  of(phone: string): SandboxCall[] {
    return [...this.calls.values()].filter((call) => call.from === phone || call.to === phone).map((call) => ({ ...call }));
  }

  private callAttrs(call: SandboxCall, caller: Account): Record<string, string> {
    return { 'call-id': call.callId, 'call-creator': this.network.jidOf(caller), caller_pn: pnJid(caller.phone) };
  }

  /** One `<call>` stanza with `content` to every companion device of the callee but `except`. */
  private toCallee(call: SandboxCall, caller: Account, except: number | undefined, content: BinaryNode): void {
    const callee = this.network.accounts.get(call.to);
    if (!callee) return;
    for (const device of callee.devices.keys()) {
      if (device === except) continue;
      this.network.deliver(callee, device, {
        tag: 'call',
        attrs: { from: this.network.jidOf(caller), id: stanzaId(), t: seconds() },
        content: [content],
      });
    }
  }

  private remember(call: SandboxCall): void {
    this.calls.set(call.callId, call);
    if (this.calls.size <= CALLS_LIMIT) return;
    const oldest = this.calls.keys().next();
    if (!oldest.done) this.calls.delete(oldest.value);
  }
}
