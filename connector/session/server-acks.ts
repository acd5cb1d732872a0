import type { BinaryNode, WASocket } from '@whiskeysockets/baileys';

/**
 * WhatsApp's answer to a message stanza: `<ack class="message" id>` when it took the message,
 * with an `error` attribute when it refused it (429 rate-overlimit, 463 reach-out time-lock, …).
 * Baileys' sendMessage resolves once the stanza is written, before that ack, and reports a
 * refusal only afterwards as a `messages.update` (messages-recv.js, handleBadAck); so a send
 * that must answer with WhatsApp's verdict waits for the ack itself, here.
 */
type ServerAck = { kind: 'ack' } | { kind: 'nack'; error: string } | { kind: 'none' };

export interface AwaitedAck {
  /** Resolves with the ack, or `none` after `timeoutMs` (or once cancelled). */
  result: Promise<ServerAck>;
  /** The send did not go out after all: stop waiting. */
  cancel(): void;
}

const ACK_EVENT = 'CB:ack,class:message';

/**
 * The sends of one socket waiting for their ack, by message id: one listener per socket rather
 * than one per send (an account's sends are serialized, but a group operation or a retry may
 * overlap, and Node warns past ten listeners).
 */
class SocketAcks {
  private readonly waiting = new Map<string, (ack: ServerAck) => void>();

  constructor(sock: WASocket) {
    sock.ws.on(ACK_EVENT, (node: BinaryNode) => {
      const { id, error } = node.attrs;
      const settle = id ? this.waiting.get(id) : undefined;
      if (!settle || !id) return;
      settle(error ? { kind: 'nack', error } : { kind: 'ack' });
    });
  }

  /**
   * Registered before the stanza is written: the ack may be read before sendMessage resolves.
   * After the timeout, `onLateNack` still hears a refusal that comes within LATE_WATCH_MS: the
   * send was answered already, but the refusal still counts (a 429 or 463 pauses the account).
   */
  expect(messageId: string, timeoutMs: number, onLateNack?: (error: string) => void): AwaitedAck {
    let settle: (ack: ServerAck) => void = () => undefined;
    let late: NodeJS.Timeout | undefined;
    const forget = (waiter: (ack: ServerAck) => void) => {
      if (this.waiting.get(messageId) === waiter) this.waiting.delete(messageId);
    };
    const watchLate = () => {
      if (!onLateNack) return;
      const waiter = (ack: ServerAck) => {
        clearTimeout(late);
        forget(waiter);
        if (ack.kind === 'nack') onLateNack(ack.error);
      };
      late = setTimeout(() => forget(waiter), LATE_WATCH_MS);
      late.unref();
      this.waiting.set(messageId, waiter);
    };
    const result = new Promise<ServerAck>((resolve) => {
      const timer = setTimeout(() => {
        settle({ kind: 'none' });
        watchLate();
      }, timeoutMs);
      settle = (ack) => {
        clearTimeout(timer);
        forget(settle);
        resolve(ack);
      };
      this.waiting.set(messageId, settle);
    });
    return { result, cancel: () => settle({ kind: 'none' }) };
  }
}

/**
 * How long a refusal is still heard after the wait gave up: WhatsApp answers a stanza it got
 * within seconds; one not answered in a minute went down with its connection.
 */
const LATE_WATCH_MS = 60_000;

// Per socket, gone with it: no listener to detach, and a socket that closed leaves its waiters to their timers.
const bySocket = new WeakMap<WASocket, SocketAcks>();

/** Starts waiting for WhatsApp's ack of `messageId` on `sock`, at most `timeoutMs` (see SocketAcks.expect). */
export function expectServerAck(sock: WASocket, messageId: string, timeoutMs: number, onLateNack?: (error: string) => void): AwaitedAck {
  let acks = bySocket.get(sock);
  if (!acks) {
    acks = new SocketAcks(sock);
    bySocket.set(sock, acks);
  }
  return acks.expect(messageId, timeoutMs, onLateNack);
}
