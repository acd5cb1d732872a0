/**
 * Scenario 2, sends under a crash: parallel text sends through the API to a sandbox phone; the
 * gateway is SIGKILLed once `killAfter` calls have answered, restarted on the same data, and
 * given `waitSeconds` (past the command queue's visibility timeout) to carry out what it
 * still holds. Every call carries an Idempotency-Key; a call that got no answer (the process
 * died) or a 500 "may have been delivered" is then asked again with its key, as a client would.
 * Each send's answers are set beside what the phone received (by text, unique per send).
 */
import type { SendOutcome } from './rest-client.js';
import { poll, sleep } from './poll.js';
import { gatewayWithAccount, restartGateway, type Stage } from './stage.js';

const WARM_UP_TIMEOUT_MS = 120_000;
const KILL_WAIT_TIMEOUT_MS = 300_000;
const STOP_CAP_MS = 60_000;

export interface SendsRun {
  calls: number;
  answered200: number;
  answered500: number;
  /** Another status than 200 or 500. */
  answeredOther: number;
  /** No HTTP answer at all (connection reset by the kill, or timeout). */
  noAnswer: number;
  delivered: number;
  deliveredMoreThanOnce: number;
  deliveredWithout200: number;
  /** Of those, the calls that answered 500 "not sent" (a send past its deadline, which must never go out later). */
  deliveredAfter500: number;
  answered200NotDelivered: number;
  /** Calls asked again with their key (no answer, or "may have been delivered"), and what that answered. */
  askedAgain: number;
  askedAgain200: number;
  askedAgain500: number;
  /** Delivered, yet no 200 even when asked again: what the client can never learn. */
  deliveredWithoutAny200: number;
  /** Answered 200 when asked again, but not at the phone. */
  askedAgain200NotDelivered: number;
}

export async function runSends(stage: Stage, run: number): Promise<SendsRun> {
  const { count, killAfter, waitSeconds } = stage.options.sends;
  const linked = await gatewayWithAccount(stage, `sends${run}`);
  const { accountId, peerPhone } = linked;
  let { gateway } = linked;
  const to = `${peerPhone}@s.whatsapp.net`;
  try {
    const inbox = async () => (await stage.control.inbox(peerPhone)).map((m) => m.text ?? '');
    // The first send sets up the Signal session and proves the path works; it is not counted.
    const warmUp = `crash send r${run} warm-up`;
    const warmUpOutcome = await gateway.rest.sendText(accountId, to, warmUp);
    if (!('status' in warmUpOutcome) || warmUpOutcome.status !== 200)
      throw new Error(`warm-up send failed: ${JSON.stringify(warmUpOutcome)}`);
    await poll('the warm-up send at the phone', async () => (await inbox()).includes(warmUp), { timeoutMs: WARM_UP_TIMEOUT_MS });

    const texts = Array.from({ length: count }, (_, i) => `crash send r${run} #${i} ${Math.random().toString(36).slice(2, 10)}`);
    const outcomes = new Map<string, SendOutcome>();
    const keys = new Map(texts.map((text, i) => [text, `crash-r${run}-${i}`]));
    const keyOf = (text: string) => keys.get(text);
    const calls = texts.map(async (text) => outcomes.set(text, await gateway.rest.sendText(accountId, to, text, keyOf(text))));
    const current = gateway;
    await poll(
      `${killAfter} send calls to answer`,
      () => {
        if (!current.process.isRunning()) throw new Error('the gateway exited during the sends');
        return outcomes.size >= killAfter;
      },
      { timeoutMs: KILL_WAIT_TIMEOUT_MS, intervalMs: 10 },
    );
    await gateway.process.kill();
    await Promise.all(calls);

    gateway = await restartGateway(gateway);
    await sleep(waitSeconds * 1000);
    if (!gateway.process.isRunning()) throw new Error('the restarted gateway exited');

    const statusIn = (outcome: SendOutcome | undefined) => (outcome !== undefined && 'status' in outcome ? outcome.status : undefined);
    const statusOf = (text: string) => statusIn(outcomes.get(text));
    const mayHaveBeenDelivered = (text: string) => {
      const outcome = outcomes.get(text);
      return outcome !== undefined && 'detail' in outcome && /may have been delivered/.test(outcome.detail ?? '');
    };
    const askAgain = texts.filter((t) => statusOf(t) === undefined || mayHaveBeenDelivered(t));
    const again = new Map<string, number | undefined>();
    for (const text of askAgain) again.set(text, statusIn(await gateway.rest.sendText(accountId, to, text, keyOf(text))));

    const received = new Map<string, number>();
    for (const text of await inbox()) received.set(text, (received.get(text) ?? 0) + 1);
    const got200 = (text: string) => statusOf(text) === 200;
    const gotAny200 = (text: string) => got200(text) || again.get(text) === 200;
    const statuses = [...outcomes.values()].map(statusIn);
    return {
      calls: count,
      answered200: statuses.filter((s) => s === 200).length,
      answered500: statuses.filter((s) => s === 500).length,
      answeredOther: statuses.filter((s) => s !== undefined && s !== 200 && s !== 500).length,
      noAnswer: statuses.filter((s) => s === undefined).length,
      delivered: texts.filter((t) => received.has(t)).length,
      deliveredMoreThanOnce: texts.filter((t) => (received.get(t) ?? 0) > 1).length,
      deliveredWithout200: texts.filter((t) => received.has(t) && !got200(t)).length,
      deliveredAfter500: texts.filter((t) => received.has(t) && statusOf(t) === 500 && !mayHaveBeenDelivered(t)).length,
      answered200NotDelivered: texts.filter((t) => got200(t) && !received.has(t)).length,
      askedAgain: askAgain.length,
      askedAgain200: [...again.values()].filter((s) => s === 200).length,
      askedAgain500: [...again.values()].filter((s) => s === 500).length,
      deliveredWithoutAny200: texts.filter((t) => received.has(t) && !gotAny200(t)).length,
      askedAgain200NotDelivered: askAgain.filter((t) => again.get(t) === 200 && !received.has(t)).length,
    };
  } finally {
    await gateway.process.terminate(STOP_CAP_MS);
  }
}

export function printSends(runs: SendsRun[], waitSeconds: number): void {
  console.log(`\n== 2. sends: gateway SIGKILLed mid-burst, restarted, ${waitSeconds} s to settle ==`);
  runs.forEach((r, i) => {
    console.log(
      `run ${i + 1}: ${r.calls} calls: answered 200 ${r.answered200}, errors ${r.calls - r.answered200} ` +
        `(500 ${r.answered500}, other status ${r.answeredOther}, no answer ${r.noAnswer}); ` +
        `delivered at the phone ${r.delivered}, more than once ${r.deliveredMoreThanOnce}, ` +
        `without a 200 ${r.deliveredWithout200} (of which answered 500 not sent: ${r.deliveredAfter500}), 200 but not delivered ${r.answered200NotDelivered}; ` +
        `asked again with their key ${r.askedAgain}: 200 ${r.askedAgain200} (not delivered ${r.askedAgain200NotDelivered}), 500 ${r.askedAgain500}; ` +
        `delivered without any 200 ${r.deliveredWithoutAny200}`,
    );
  });
  const met = runs.every(
    (r) =>
      r.answered200NotDelivered === 0 &&
      r.askedAgain200NotDelivered === 0 &&
      r.deliveredMoreThanOnce === 0 &&
      r.deliveredAfter500 === 0 &&
      r.deliveredWithoutAny200 === 0,
  );
  console.log(
    `goal: every 200 delivered exactly once, nothing delivered after a 500, and every delivered send answers 200 (at once or asked again with its key): ${met ? 'MET' : 'NOT MET'}`,
  );
  // What the README promises: a delivered send that never answered 200 is the kill's instant
  // (docs/guarantees.md), not a broken promise; a 200 for what never arrived, or a "not sent" that
  // arrived, would be.
  const promised = runs.every(
    (r) =>
      r.answered200NotDelivered === 0 && r.askedAgain200NotDelivered === 0 && r.deliveredMoreThanOnce === 0 && r.deliveredAfter500 === 0,
  );
  console.log(`README's "exactly once per answer" (every 200 delivered once, no "not sent" delivered): ${promised ? 'MET' : 'NOT MET'}`);
}
