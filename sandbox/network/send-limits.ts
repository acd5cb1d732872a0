import type { BinaryNode } from '@whiskeysockets/baileys';

/**
 * WhatsApp's refusals, on demand (control API `POST /limits`, `POST /acks/withhold`): the next
 * `count` messages an account sends are refused with a nack carrying `error` (429 rate-overlimit,
 * 463 reach-out time-lock), as WhatsApp answers a number that sends too much or starts too many
 * new chats; or they go through with their server ack withheld, as when WhatsApp's ack is lost
 * on a connection that went quiet. Counted per account (every device of the number), on new
 * sends only: a retry resend or a message to the account's own phone is neither refused nor
 * counted. Kept in memory: a sandbox restart forgets them.
 */
export type SendLimitError = 429 | 463;

/** What the network does with one new send of an account. */
export type SendVerdict = { kind: 'deliver' } | { kind: 'refuse'; error: SendLimitError; delayMs: number } | { kind: 'withhold_ack' };

interface Refusals {
  error: SendLimitError;
  count: number;
  /** The nack comes this long after the message (0: at once), as over a slow or stalled link. */
  delayMs: number;
}

interface Pending {
  refuse?: Refusals;
  withholdAcks?: number;
}

export class SendLimits {
  private readonly byPhone = new Map<string, Pending>();

  /** The account's next `count` sends are refused with `error` (replacing an earlier limit; 0 clears it). */
  refuse(phone: string, error: SendLimitError, count: number, delayMs = 0): void {
    const pending = this.byPhone.get(phone) ?? {};
    if (count > 0) pending.refuse = { error, count, delayMs };
    else delete pending.refuse;
    this.set(phone, pending);
  }

  /** The account's next `count` sends are delivered without their server ack (0 clears it). */
  withholdAcks(phone: string, count: number): void {
    const pending = this.byPhone.get(phone) ?? {};
    if (count > 0) pending.withholdAcks = count;
    else delete pending.withholdAcks;
    this.set(phone, pending);
  }

  /** What to do with a new send of `phone`, counting it against what is pending. */
  take(phone: string): SendVerdict {
    const pending = this.byPhone.get(phone);
    if (!pending) return { kind: 'deliver' };
    let verdict: SendVerdict = { kind: 'deliver' };
    if (pending.refuse) {
      verdict = { kind: 'refuse', error: pending.refuse.error, delayMs: pending.refuse.delayMs };
      pending.refuse.count -= 1;
      if (pending.refuse.count <= 0) delete pending.refuse;
    } else if (pending.withholdAcks) {
      verdict = { kind: 'withhold_ack' };
      pending.withholdAcks -= 1;
      if (pending.withholdAcks <= 0) delete pending.withholdAcks;
    }
    this.set(phone, pending);
    return verdict;
  }

  /** What is still pending for `phone` (the control API shows it). */
  describe(phone: string): { refuse?: Refusals; withholdAcks?: number } {
    const pending = this.byPhone.get(phone);
    return {
      ...(pending?.refuse ? { refuse: { ...pending.refuse } } : {}),
      ...(pending?.withholdAcks ? { withholdAcks: pending.withholdAcks } : {}),
    };
  }

  private set(phone: string, pending: Pending): void {
    if (pending.refuse || pending.withholdAcks) this.byPhone.set(phone, pending);
    else this.byPhone.delete(phone);
  }
}

/** Sends a refusal's nack to the sending device, at once or `delayMs` later (a slow link). */
export function sendNack(device: { send(node: BinaryNode): void }, nack: BinaryNode, delayMs: number): void {
  if (delayMs <= 0) device.send(nack);
  else setTimeout(() => device.send(nack), delayMs).unref();
}
