/**
 * `npm run bench:ack` — what waiting for WhatsApp's ack (SEND_ACK_WAIT_MS, docs/sending.md#whatsapps-refusals)
 * adds to a send. One account on the sandbox sends texts to a phone through the API, one at a
 * time, with the connector waiting for the ack (`on`, the default 3 s bound) and without
 * (`off`, SEND_ACK_WAIT_MS=0), in alternating blocks within one run so that the VM's speed moves
 * both alike. Prints each mode's API latency (p50/p99, request to answer, as a client sees it)
 * and, with the wait on, the ack's round trip after the stanza was written (the connector's
 * `ackWaitedMs`; the message's store runs meanwhile, so the wait adds only what the ack takes
 * longer than the store).
 *
 * BENCH_SENDS (200) sends per mode, in blocks of BENCH_BLOCK (50). The emulators, the sandbox,
 * the API and the connector all run in this process (test/e2e/support/gateway.ts).
 */
import { startConnector, type Connector } from '../connector/connector.js';
import { startTestApi } from '../test/support/test-api.js';
import { startGateway } from '../test/e2e/support/gateway.js';

const SENDS = Number(process.env.BENCH_SENDS ?? 200);
const BLOCK = Number(process.env.BENCH_BLOCK ?? 50);
const WAIT_ON_MS = 3_000;
type Mode = 'on' | 'off';

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};
const ms = (value: number) => `${value.toFixed(1)} ms`;

const gw = await startGateway();
const api = await startTestApi(gw.stack);
const account = { id: 'benchack', phone: '15550900001' };
const to = '15550900002@s.whatsapp.net';
let connector: Connector = gw.connector;
try {
  await gw.control.createPhone(account.phone);
  await gw.control.createPhone('15550900002');
  const from = gw.logs.lines.length;
  await api.call('POST', '/accounts', { id: account.id });
  await gw.linkAccount(account.id, account.phone, { logsFrom: from });

  /** The mode of each measured send, by message id (the connector's log line names it). */
  const modeOf: Record<string, Mode> = {};
  const send = async (text: string, measured?: Mode) => {
    const started = performance.now();
    const answer = await api.call('POST', `/accounts/${account.id}/message/send`, { to, message: text });
    if (answer.status !== 200) throw new Error(`send answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    if (measured) modeOf[String(answer.body.messageId)] = measured;
    return performance.now() - started;
  };

  let mode: Mode = 'on';
  /** A connector whose ack wait is `next`: the running one stops, the account resumes on the new one. */
  const switchTo = async (next: Mode) => {
    if (next === mode) return;
    await connector.stop();
    connector = await startConnector({
      config: { ...gw.config, SEND_ACK_WAIT_MS: next === 'on' ? WAIT_ON_MS : 0 },
      clients: gw.stack.clients,
      logger: gw.logs.logger,
      printTerminalQr: () => undefined,
      commandWaitSeconds: 1,
    });
    mode = next;
    // Warm: the first sends after a resume pay for the session's reconnect.
    for (let i = 0; i < 5; i += 1) await send(`warm ${next} ${i}`);
  };

  const latencies: Record<Mode, number[]> = { on: [], off: [] };
  for (let i = 0; i < 10; i += 1) await send(`warm ${i}`);
  const logsFrom = gw.logs.lines.length;
  for (let done = 0; done < SENDS; done += BLOCK) {
    for (const next of ['off', 'on'] as const) {
      await switchTo(next);
      for (let i = 0; i < Math.min(BLOCK, SENDS - done); i += 1) latencies[next].push(await send(`bench ${next} ${done + i}`, next));
    }
  }
  const sentLines = gw.logs.linesSince(
    logsFrom,
    (line) => line.msg === 'sent' && typeof line.sendMs === 'number' && String(line.messageId) in modeOf,
  );
  const acks = sentLines.filter((line) => typeof line.ackWaitedMs === 'number').map((line) => Number(line.ackWaitedMs));
  const connectorMs = (m: Mode) => sentLines.filter((line) => modeOf[String(line.messageId)] === m).map((line) => Number(line.sendMs));

  console.log(`\nack wait: ${SENDS} sends per mode, one at a time, alternating blocks of ${BLOCK}`);
  console.log('| | p50 | p99 |');
  console.log('|---|---|---|');
  for (const m of ['off', 'on'] as const) {
    console.log(`| API send, wait ${m} | ${ms(percentile(latencies[m], 50))} | ${ms(percentile(latencies[m], 99))} |`);
  }
  for (const m of ['off', 'on'] as const) {
    const values = connectorMs(m);
    console.log(
      `| connector, message handed to Baileys to outcome recorded, wait ${m} | ${ms(percentile(values, 50))} | ${ms(percentile(values, 99))} |`,
    );
  }
  console.log(
    `| ack round trip after the stanza was written (wait on, ${acks.length} sends) | ${ms(percentile(acks, 50))} | ${ms(percentile(acks, 99))} |`,
  );
  console.log(
    `added by the wait at the connector: p50 ${ms(percentile(connectorMs('on'), 50) - percentile(connectorMs('off'), 50))}, p99 ${ms(percentile(connectorMs('on'), 99) - percentile(connectorMs('off'), 99))}`,
  );
} finally {
  await connector.stop();
  await api.close();
  await gw.stop();
}
