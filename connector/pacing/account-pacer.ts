import type { Logger } from '../../core/logger.js';
import {
  CLAIM_MARGIN_MS,
  drawGap,
  emptyCounts,
  RATE_LIMIT_DETAIL,
  limitsAllowAt,
  typingMs,
  withSend,
  type SendCounts,
  type SendPolicy,
} from '../../core/pacing/limits.js';
import type { QueuedSend } from '../../core/schemas/command.js';
import { failPendingOutboundPaused, findOutbound } from '../../core/store/outbound.js';
import { correctWaiting, countsOf, loadSendQueue, removeQueuedSend, waiting } from '../../core/store/send-queue.js';
import type { Table } from '../../core/store/table.js';

/** What the pacer needs of the account's session here. */
export interface PacedSession {
  status: string;
  currentSettings: { sendPolicy: SendPolicy };
  linkedAt: number | undefined;
  typing(jid: string): Promise<void>;
}

export interface AccountPacerDeps {
  table: Table;
  logger: Logger;
  session(accountId: string): PacedSession | undefined;
  /** Runs the send through the one send path (connector/commands/send-handlers.ts); true when it was claimed (handed to WhatsApp). */
  send(send: QueuedSend['send']): Promise<boolean>;
  /** Unix ms the account's sending is paused until (WhatsApp refused a send), if it is. */
  pausedUntil(accountId: string): number | undefined;
  /** Whether the account has no message with the chat yet, either way. */
  isNewChat(accountId: string, jid: string): Promise<boolean>;
  /** An async send failed before WhatsApp had it: its `message.status` `failed` event. */
  failedBeforeSend(accountId: string, send: QueuedSend, error: string): void;
  random?: () => number;
}

/** While its account is not connected (a drop, a hand-over), the head of the queue is looked at again this often: memory only. */
const NOT_CONNECTED_RETRY_MS = 1_000;
/** The timer fires this long before the turn: the reads before a send are done by then, and the send goes at its turn. */
const LEAD_MS = 100;
/** After a failed DynamoDB request: the queue stays, and is tried again. */
const ERROR_RETRY_MS = 5_000;

const TEXT_SENDS: ReadonlySet<string> = new Set(['send_text', 'send_reply']);
const textOf = (send: QueuedSend['send']): string | undefined =>
  send.type === 'send_text' || send.type === 'send_reply' ? send.payload.text : undefined;

/**
 * One account's paced sends on the connector that runs it (docs/sending.md#paced-sends). The
 * queue lives in DynamoDB (core/store/send-queue.ts); this holds it in memory, in ticket order,
 * with the account's counts, and sends its head when its turn comes, on a timer: nothing is
 * polled, so an account with nothing queued costs nothing. Taking the account replays what is
 * queued (one Query); each `send_queued` command adds one send.
 *
 *   turn:   after the last send + the drawn gap, when the rolling limits allow, after a pause
 *   typing: "typing…" for the text's typing time, ending at the turn (a gap shorter than it
 *           makes the send wait for it)
 *   send:   the one send path (claim pending -> sending, send, finish): exactly once whatever
 *           happens around it; then the counts and the queue item are written
 *
 * A plain send whose turn would come after its deadline is failed at once with `retryAt` (the
 * API answers 500 `send rate limit` with `retryAfter`), and never goes out later.
 */
export class AccountPacer {
  private sends: QueuedSend[] = [];
  private readonly seen = new Set<number>();
  private readonly newChat = new Map<number, boolean>();
  /** When each send joined the queue here (the gap log line compares it with the last send). */
  private readonly addedAt = new Map<number, number>();
  /** Chats known to have messages: no read to ask again. */
  private readonly knownChats = new Set<string>();
  /** Sends read back from DynamoDB when the account was taken: their record is looked at first. */
  private readonly replayed = new Set<number>();
  private counts: SendCounts = emptyCounts();
  /** The gap before the next send, drawn once per send. */
  private gap: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private loaded = false;
  private stopped = false;
  /** The turn under way, if any (stop() waits for it). */
  private running: Promise<void> | undefined;
  /** The queue items and counts written after each send, one after the other. */
  private writes: Promise<void> = Promise.resolve();
  /** Ends a wait for the turn at once (stop()). */
  private wakeUp: (() => void) | undefined;
  private readonly log: Logger;

  constructor(
    private readonly accountId: string,
    private readonly deps: AccountPacerDeps,
  ) {
    this.log = deps.logger.child({ accountId });
    void this.load();
  }

  /** Queued sends held here (tests, the benchmark). */
  get size(): number {
    return this.sends.length;
  }

  /** A send queued by the API (its `send_queued` command); one seen already is ignored. */
  add(send: QueuedSend): void {
    if (this.seen.has(send.ticket)) return;
    this.seen.add(send.ticket);
    this.addedAt.set(send.ticket, Date.now());
    const at = this.sends.findIndex((queued) => queued.ticket > send.ticket);
    if (at < 0) this.sends.push(send);
    else this.sends.splice(at, 0, send);
    this.schedule();
  }

  /**
   * The account leaves this connector: its queue stays in DynamoDB for the next one. Resolves
   * once a send under way has finished (a wait for its turn or its typing ends at once, unsent):
   * the session must not close under a send, whose Signal keys would then not be stored and
   * whose recipient could not read the next connector's messages.
   */
  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.wakeUp?.();
    return Promise.all([this.running, this.writes]).then(() => undefined);
  }

  private async load(): Promise<void> {
    try {
      const { state, sends } = await loadSendQueue(this.deps.table, this.accountId);
      if (this.stopped) return;
      this.counts = countsOf(state);
      for (const send of sends) {
        if (!this.seen.has(send.ticket)) this.replayed.add(send.ticket);
        this.add(send);
      }
      if (waiting(state) !== sends.length) await correctWaiting(this.deps.table, this.accountId, state.enqueued, sends.length);
      if (sends.length > 0) this.log.info({ queued: sends.length }, 'queued sends replayed');
      this.loaded = true;
      this.schedule();
    } catch (error) {
      this.log.error({ err: error }, 'reading the send queue failed; trying again');
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.load();
      }, ERROR_RETRY_MS);
    }
  }

  /** Arms the timer for the head's typing (or its send); does nothing while a send runs. */
  private schedule(delayMs?: number): void {
    if (this.stopped || !this.loaded || this.busy) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const head = this.sends[0];
    if (!head) return;
    const wait = delayMs ?? Math.max(0, this.typingStart(head, this.turnOf(head)) - LEAD_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.turn().finally(() => {
        this.running = undefined;
      });
    }, wait);
  }

  private policy(): SendPolicy | undefined {
    const policy = this.deps.session(this.accountId)?.currentSettings.sendPolicy;
    return policy?.enabled ? policy : undefined;
  }

  /** When the head may be handed to WhatsApp: gap, limits and pause (pacing off: at once, a pause still holds). */
  private turnOf(head: QueuedSend, now = Date.now()): number {
    const paused = this.deps.pausedUntil(this.accountId) ?? 0;
    const policy = this.policy();
    if (!policy) return Math.max(now, paused);
    this.gap ??= drawGap(policy, this.deps.random);
    const last = this.counts.lastSentAt;
    const afterGap = last === undefined ? now : Math.max(now, last + this.gap);
    const limits = limitsAllowAt(this.counts, policy, {
      now: afterGap,
      linkedAt: this.deps.session(this.accountId)?.linkedAt,
      newChat: this.newChat.get(head.ticket) ?? false,
    });
    return Math.max(limits, paused);
  }

  private typingFor(head: QueuedSend): number {
    const policy = this.policy();
    const text = textOf(head.send);
    return policy?.typing && text !== undefined && TEXT_SENDS.has(head.send.type) ? typingMs(text) : 0;
  }

  /** Typing ends at the turn; it starts no earlier than now. */
  private typingStart(head: QueuedSend, turn: number): number {
    return Math.max(Date.now(), turn - this.typingFor(head));
  }

  private async turn(): Promise<void> {
    const head = this.sends[0];
    if (!head || this.stopped) return;
    this.busy = true;
    let retryIn: number | undefined;
    try {
      retryIn = await this.tryHead(head);
    } catch (error) {
      this.log.error({ err: error, messageId: head.messageId }, 'a queued send failed to run; trying again');
      retryIn = ERROR_RETRY_MS;
    } finally {
      this.busy = false;
    }
    this.schedule(retryIn);
  }

  /** Sends the head when its turn has come; answers a delay to look again, or undefined when it left the queue. */
  private async tryHead(head: QueuedSend): Promise<number | undefined> {
    const { table } = this.deps;
    const session = this.deps.session(this.accountId);
    if (!session) return NOT_CONNECTED_RETRY_MS;
    const typing = this.typingFor(head);
    // A replayed send may have been claimed, sent or cancelled before; a fresh one is looked at
    // only before "typing…" (never shown for a cancelled send). Otherwise the send path's own read
    // of the record decides (a cancelled send is not claimed), and the happy path pays no extra read.
    if (this.replayed.has(head.ticket) || typing > 0) {
      const record = await findOutbound(table, this.accountId, head.messageId);
      if (record?.status === 'sending') {
        // Claimed by a connector that stopped mid-send: the send path resolves it, never sends it again.
        await this.deps.send(head.send);
        this.counts = withSend(this.counts, record.claimedAt ?? Date.now(), false);
        return this.leave(head, true);
      }
      // Cancelled, failed at its deadline by the API, or sent before a crash: it leaves the queue.
      if (record?.status !== 'pending') return this.leave(head, false);
      this.replayed.delete(head.ticket);
    }
    if (session.status !== 'connected') return NOT_CONNECTED_RETRY_MS;
    const policy = this.policy();
    const jid = head.send.payload.to;
    if (policy && !this.newChat.has(head.ticket)) {
      const isNew = !this.knownChats.has(jid) && (await this.deps.isNewChat(this.accountId, jid));
      this.newChat.set(head.ticket, isNew);
      if (!isNew) this.knownChats.add(jid);
    }
    const turn = this.turnOf(head);
    if (!head.async && turn > head.deadline - CLAIM_MARGIN_MS) {
      this.log.info({ messageId: head.messageId, turn, deadline: head.deadline }, 'plain send refused: its turn comes after its deadline');
      await failPendingOutboundPaused(table, this.accountId, head.messageId, RATE_LIMIT_DETAIL, turn);
      return this.leave(head, false);
    }
    // Woken LEAD_MS early for the reads above; woken much earlier (a send added, a pause, a
    // change of settings): look again at the right time.
    const wait = turn - typing - Date.now();
    if (wait > 2 * LEAD_MS) return wait - LEAD_MS;
    await this.sleepUntil(turn - typing);
    if (typing > 0 && !this.stopped) {
      // Shown for its whole time: a gap shorter than it makes the send wait for it.
      const sendAt = Math.max(turn, Date.now() + typing);
      await session.typing(jid).catch((error: unknown) => this.log.debug({ err: error }, 'typing not shown'));
      await this.sleepUntil(sendAt);
    }
    // Stopped meanwhile: the session is leaving, the send is the next owner's.
    if (this.stopped) return undefined;
    const drawn = this.gap;
    const last = this.counts.lastSentAt;
    const handedAt = Date.now();
    const claimed = await this.deps.send(head.send);
    if (claimed) {
      // The pause kept since the last send ended, against the one drawn (bench/pacing.ts reads it).
      // Only for a send that was waiting when its gap began: one queued later went when it came.
      const waited = drawn !== undefined && last !== undefined && (this.addedAt.get(head.ticket) ?? 0) <= last;
      this.log.info(
        { messageId: head.messageId, ...(waited ? { gapDrawnMs: drawn, gapMs: handedAt - last } : {}) },
        'paced send handed to WhatsApp',
      );
      this.counts = withSend(this.counts, Date.now(), this.newChat.get(head.ticket) ?? false);
      this.knownChats.add(jid);
      this.gap = undefined;
    } else if (head.async) {
      const after = await findOutbound(table, this.accountId, head.messageId);
      if (after?.status === 'failed') this.deps.failedBeforeSend(this.accountId, head, after.reason ?? 'send failed');
    }
    return this.leave(head, claimed);
  }

  /** Waits until `at` (a timer may fire a millisecond early: it waits again), or less when stop() comes first. */
  private async sleepUntil(at: number): Promise<void> {
    while (!this.stopped && Date.now() < at) await this.sleep(Math.max(1, at - Date.now()));
  }

  /** Waits `ms`, or less when stop() comes first. */
  private async sleep(ms: number): Promise<void> {
    if (ms <= 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeUp = undefined;
  }

  /** The head is done with: out of memory, its item deleted (with the counts after a send). */
  private async leave(head: QueuedSend, counted: boolean): Promise<undefined> {
    // Written behind the next turn, in order, not before it: waiting for the two writes held the
    // next send past its gap whenever they took longer than it (bench:pacing, a busy table). A
    // crash before they land leaves the item, whose record (sent, failed) the next owner reads
    // first and skips; the counts then miss that send.
    const counts = counted ? this.counts : undefined;
    this.writes = this.writes
      .then(async () => {
        await removeQueuedSend(this.deps.table, this.accountId, head.ticket, counts);
      })
      .catch((error: unknown) =>
        this.log.error({ err: error, messageId: head.messageId }, 'removing a queued send failed; the next owner skips it'),
      );
    if (this.sends[0] === head) this.sends.shift();
    this.newChat.delete(head.ticket);
    this.replayed.delete(head.ticket);
    this.addedAt.delete(head.ticket);
    return undefined;
  }
}
