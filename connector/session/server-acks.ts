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

  /** Registered before the stanza is written: the ack may be read before sendMessage resolves. */
  expect(messageId: string, timeoutMs: number): AwaitedAck {
    let settle: (ack: ServerAck) => void = () => undefined;
    const result = new Promise<ServerAck>((resolve) => {
      const timer = setTimeout(() => settle({ kind: 'none' }), timeoutMs);
      settle = (ack) => {
        clearTimeout(timer);
        if (this.waiting.get(messageId) === settle) this.waiting.delete(messageId);
        resolve(ack);
      };
      this.waiting.set(messageId, settle);
    });
    return { result, cancel: () => settle({ kind: 'none' }) };
  }
}

// Per socket, gone with it: no listener to detach, and a socket that closed leaves its waiters to their timers.
const bySocket = new WeakMap<WASocket, SocketAcks>();

/** Starts waiting for WhatsApp's ack of `messageId` on `sock`, at most `timeoutMs`. */
export function expectServerAck(sock: WASocket, messageId: string, timeoutMs: number): AwaitedAck {
  let acks = bySocket.get(sock);
  if (!acks) {
    acks = new SocketAcks(sock);
    bySocket.set(sock, acks);
  }
  return acks.expect(messageId, timeoutMs);
}
