/**
 * Scenario 3, webhook outage: the receiver is down (refusing connections, or answering 503) for
 * `seconds` while the phone sends `messages` texts spread evenly over the outage; then it comes
 * back. Measures how long after its recovery the first and the last of those messages reach it.
 */
import { poll, sleep } from './poll.js';
import { startCrashReceiver } from './receiver.js';
import { gatewayWithAccount, type Stage } from './stage.js';

const WARM_UP_TIMEOUT_MS = 120_000;
const STOP_CAP_MS = 60_000;

export interface OutageRun {
  messages: number;
  /** 503 answers given during the outage (503 mode only). */
  rejectedPosts: number;
  deliveredAfterRecovery: number;
  /** Seconds from the recovery to the first / last delivery; undefined when none. */
  firstSeconds: number | undefined;
  lastSeconds: number | undefined;
  /** Not delivered when the wait's cap ended. */
  undelivered: number;
}

export async function runOutage(stage: Stage, run: number): Promise<OutageRun> {
  const { seconds, messages, mode, capSeconds } = stage.options.outage;
  const receiver = await startCrashReceiver();
  const { gateway, accountPhone, peerPhone } = await gatewayWithAccount(stage, `outage${run}`);
  try {
    await gateway.rest.registerWebhook(receiver.url);
    const { id: warmUpId } = await stage.control.sendFromPhone(peerPhone, accountPhone, `crash outage r${run} warm-up`);
    await poll('the warm-up message at the webhook receiver', () => receiver.deliveries.some((d) => d.messageId === warmUpId), {
      timeoutMs: WARM_UP_TIMEOUT_MS,
    });

    await receiver.goDown(mode);
    const downAt = performance.now();
    const sent = new Set<string>();
    for (let i = 0; i < messages; i++) {
      await sleep(Math.max(0, downAt + (i * seconds * 1000) / messages - performance.now()));
      const { id } = await stage.control.sendFromPhone(peerPhone, accountPhone, `crash outage r${run} #${i}`);
      sent.add(id);
    }
    await sleep(Math.max(0, downAt + seconds * 1000 - performance.now()));
    if (!gateway.process.isRunning()) throw new Error('the gateway exited during the outage');
    await receiver.comeUp();
    const upAt = performance.now();

    const deliveredIds = () => new Set(receiver.deliveries.filter((d) => sent.has(d.messageId)).map((d) => d.messageId));
    await poll('every outage message at the receiver', () => deliveredIds().size === sent.size, {
      timeoutMs: capSeconds * 1000,
      intervalMs: 100,
    }).catch(() => undefined);

    // First arrival of each message after the recovery (a delivery before it would be a receiver bug).
    const firstArrival = new Map<string, number>();
    for (const d of receiver.deliveries) if (sent.has(d.messageId) && !firstArrival.has(d.messageId)) firstArrival.set(d.messageId, d.at);
    const times = [...firstArrival.values()].map((at) => (at - upAt) / 1000).sort((a, b) => a - b);
    return {
      messages: sent.size,
      rejectedPosts: receiver.rejectedPosts,
      deliveredAfterRecovery: times.length,
      firstSeconds: times[0],
      lastSeconds: times.at(-1),
      undelivered: sent.size - times.length,
    };
  } finally {
    await gateway.process.terminate(STOP_CAP_MS);
    await receiver.stop();
  }
}

const seconds = (value: number | undefined) => (value === undefined ? '-' : `${value.toFixed(1)} s`);

export function printOutage(runs: OutageRun[], options: Stage['options']['outage']): void {
  const how = options.mode === 'refused' ? 'resetting every connection' : 'answering 503';
  console.log(`\n== 3. webhook outage: receiver ${how} for ${options.seconds} s, then up ==`);
  runs.forEach((r, i) => {
    console.log(
      `run ${i + 1}: ${r.messages} messages during the outage${options.mode === '503' ? ` (${r.rejectedPosts} POSTs answered 503)` : ''}; ` +
        `after recovery: first delivery ${seconds(r.firstSeconds)}, last ${seconds(r.lastSeconds)}, ` +
        `delivered ${r.deliveredAfterRecovery}, not delivered within ${options.capSeconds} s: ${r.undelivered}`,
    );
  });
  const met = runs.every((r) => r.undelivered === 0 && r.lastSeconds !== undefined && r.lastSeconds <= 60);
  console.log(`goal: every message delivered within 60 s of the recovery: ${met ? 'MET' : 'NOT MET'}`);
}
