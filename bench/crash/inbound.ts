/**
 * Scenario 1, inbound under a crash: a phone sends a burst of texts to a gateway account; the
 * gateway is SIGKILLed once the webhook receiver has accepted `killAfter` of them, restarted on
 * the same data, and left until nothing new is stored or posted. Then: what the phone sent,
 * what the API lists as stored, what the receiver got.
 */
import { inParallel, poll, sleep } from './poll.js';
import { deliverySummary, startCrashReceiver } from './receiver.js';
import { waitUntilQuiet } from './settle.js';
import { gatewayWithAccount, restartGateway, type Stage } from './stage.js';

const WARM_UP_TIMEOUT_MS = 120_000;
const KILL_WAIT_TIMEOUT_MS = 600_000;
const STOP_CAP_MS = 60_000;

export interface InboundRun {
  sent: number;
  /** Sends the sandbox refused (not counted as sent). */
  sendErrors: number;
  /** Texts the phone had sent, and the receiver had accepted, when the gateway was killed. */
  sentAtKill: number;
  postedAtKill: number;
  stored: number;
  posted: number;
  lost: number;
  storedNotPosted: number;
  /** Posted although not stored: a webhook without a stored message behind it. */
  postedNotStored: number;
  duplicates: number;
  settled: boolean;
  /** Seconds from the restart to the last change seen. */
  lastChangeSeconds: number;
}

export async function runInbound(stage: Stage, run: number): Promise<InboundRun> {
  const { messages, killAfter, senderConcurrency, rate, quietSeconds, capSeconds } = stage.options.inbound;
  const receiver = await startCrashReceiver();
  const linked = await gatewayWithAccount(stage, `inbound${run}`);
  const { accountId, accountPhone, peerPhone } = linked;
  let { gateway } = linked;
  try {
    await gateway.rest.registerWebhook(receiver.url);
    // The first message sets up the Signal session and proves the path works; it is not counted.
    const { id: warmUpId } = await stage.control.sendFromPhone(peerPhone, accountPhone, `crash inbound r${run} warm-up`);
    await poll('the warm-up message at the webhook receiver', () => receiver.deliveries.some((d) => d.messageId === warmUpId), {
      timeoutMs: WARM_UP_TIMEOUT_MS,
    });

    const sentIds = new Set<string>();
    let sendErrors = 0;
    const burstStart = performance.now();
    const sending = inParallel(
      Array.from({ length: messages }, (_, i) => i),
      senderConcurrency,
      async (i) => {
        if (rate > 0) await sleep(Math.max(0, burstStart + (i * 1000) / rate - performance.now()));
        try {
          const { id } = await stage.control.sendFromPhone(peerPhone, accountPhone, `crash inbound r${run} #${i}`);
          sentIds.add(id);
        } catch {
          sendErrors++;
        }
      },
    );
    const postedBurst = () => new Set(receiver.deliveries.filter((d) => d.messageId !== warmUpId).map((d) => d.messageId)).size;
    const current = gateway;
    await poll(
      `${killAfter} burst messages at the webhook receiver`,
      () => {
        if (!current.process.isRunning()) throw new Error('the gateway exited during the burst');
        return postedBurst() >= killAfter;
      },
      { timeoutMs: KILL_WAIT_TIMEOUT_MS, intervalMs: 20 },
    );
    await gateway.process.kill();
    const sentAtKill = sentIds.size;
    const postedAtKill = postedBurst();

    gateway = await restartGateway(gateway);
    await sending;
    const restarted = gateway;
    const settledAfter = await waitUntilQuiet(
      async () => {
        if (!restarted.process.isRunning()) throw new Error('the restarted gateway exited');
        return `${(await restarted.rest.storedInboundIds(accountId)).size}/${receiver.deliveries.length}`;
      },
      quietSeconds * 1000,
      capSeconds * 1000,
    );

    const stored = await gateway.rest.storedInboundIds(accountId);
    const { messageIds: posted, duplicates } = deliverySummary(receiver.deliveries, sentIds);
    const sent = [...sentIds];
    return {
      sent: sent.length,
      sendErrors,
      sentAtKill,
      postedAtKill,
      stored: sent.filter((id) => stored.has(id)).length,
      posted: posted.size,
      lost: sent.filter((id) => !stored.has(id)).length,
      storedNotPosted: sent.filter((id) => stored.has(id) && !posted.has(id)).length,
      postedNotStored: sent.filter((id) => posted.has(id) && !stored.has(id)).length,
      duplicates,
      settled: settledAfter.settled,
      lastChangeSeconds: settledAfter.lastChangeSeconds,
    };
  } finally {
    await gateway.process.terminate(STOP_CAP_MS);
    await receiver.stop();
  }
}

export function printInbound(runs: InboundRun[]): void {
  console.log('\n== 1. inbound: gateway SIGKILLed mid-burst, restarted on its data ==');
  runs.forEach((r, i) => {
    console.log(
      `run ${i + 1}: sent ${r.sent}${r.sendErrors ? ` (+${r.sendErrors} refused by the sandbox)` : ''}, at the kill sent ${r.sentAtKill} and posted ${r.postedAtKill}; ` +
        `stored ${r.stored}, posted ${r.posted}, lost ${r.lost}, stored-but-not-posted ${r.storedNotPosted}, ` +
        `posted-but-not-stored ${r.postedNotStored}, duplicates ${r.duplicates}; ` +
        (r.settled
          ? `quiet from ${r.lastChangeSeconds.toFixed(0)} s after the restart`
          : `still changing at the cap (last change ${r.lastChangeSeconds.toFixed(0)} s after the restart)`),
    );
  });
  const met = runs.every((r) => r.lost === 0 && r.storedNotPosted === 0);
  console.log(`goal: lost 0 and stored-but-not-posted 0 in every run: ${met ? 'MET' : 'NOT MET'}`);
}
