import { pino } from 'pino';
import type { Config } from '../../../core/config.js';
import { createQueues, type Queues } from '../../../core/queues.js';
import { findAccount } from '../../../core/store/accounts.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import type { AccountStatus } from '../../../core/schemas/account.js';
import { startConnector, type Connector, type ConnectorDeps } from '../../../connector/connector.js';
import type { OwnershipTiming } from '../../../connector/ownership/ownership.js';
import { startSandbox, type RunningSandbox } from '../../../sandbox/index.js';
import { startTestStack, type TestStack } from '../../support/test-stack.js';
import { captureLogs, type CapturedLogs } from './log-capture.js';
import { sandboxControl, type SandboxControl } from './sandbox-control.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';
import { waitFor } from '../../support/wait.js';

/**
 * The whole gateway in one process for end-to-end tests: emulators (DynamoDB, SQS, S3), the
 * sandbox WhatsApp network, the connector (with its log captured in memory), and a webhook
 * receiver. Everything listens on 127.0.0.1, port 0. Typical use:
 *
 *   const gw = await startGateway();               // beforeAll
 *   const from = gw.logs.lines.length;
 *   ...create the account (HTTP or gw.createAccount)...
 *   await gw.linkAccount('alice', '15550000001', { logsFrom: from });   // QR from the log, scanned
 *   await gw.stop();                               // afterAll
 *
 * One harness per test file: Baileys' certificate root is process-wide, so a process talks to
 * one sandbox (vitest runs each file in its own process).
 */
export interface GatewayOptions {
  /** Shorter lease timings make takeover tests quick. */
  ownership?: Partial<OwnershipTiming>;
  /** Config overrides (e.g. SEND_TIMEOUT_MS). */
  overrides?: Record<string, string>;
  /** Level of the captured connector log (default info: the QR line is at info). */
  logLevel?: pino.LevelWithSilent;
  /** false: no delivery worker, so a test reads the webhook event queue itself. */
  webhookDelivery?: boolean;
  /** How long each QR lives (QR rounds run out quickly). */
  qrTimeoutMs?: number;
}

export interface Gateway {
  config: Config;
  stack: TestStack;
  table: Table;
  queues: Queues;
  sandbox: RunningSandbox;
  control: SandboxControl;
  webhooks: WebhookReceiver;
  /** The log of the current main connector (kept across restarts). */
  logs: CapturedLogs;
  /** The current main connector. */
  connector: Connector;
  /** Environment for a connector child process (emulators + sandbox). */
  env: Record<string, string>;
  /** Stops the main connector gracefully and starts a new one (same log). */
  restartConnector(): Promise<Connector>;
  /** Stops the main connector (e.g. before handing the accounts to a child process). */
  stopConnector(): Promise<void>;
  /** Another connector against the same table and network, with its own log. */
  startExtraConnector(options?: { ownership?: Partial<OwnershipTiming> }): Promise<{ connector: Connector; logs: CapturedLogs }>;
  /** Reads the account's next QR from the connector log, scans it with the phone, waits for `connected`. */
  linkAccount(accountId: string, phone: string, options?: { logsFrom?: number; logs?: CapturedLogs }): Promise<void>;
  /** Polls the stored account until its status is `status`. */
  waitForStatus(accountId: string, status: AccountStatus, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startGateway(options: GatewayOptions = {}): Promise<Gateway> {
  const sandbox = await startSandbox({ port: 0, logger: pino({ level: 'silent' }) });
  const { descriptor } = sandbox;
  const sandboxEnv = {
    WA_WS_URL: descriptor.wsUrl,
    WA_ROOT_PUBLIC_KEY: descriptor.rootPublicKey,
    WA_MEDIA_CA_FILE: descriptor.mediaCaFile,
    WA_VERSION_URL: descriptor.versionUrl,
  };
  const stack = await startTestStack({ overrides: { ...sandboxEnv, ...options.overrides } });
  const table = tableOf(stack.config, stack.clients);
  const queues = createQueues(stack.config, stack.clients, pino({ level: 'silent' }));
  const webhooks = await startWebhookReceiver();
  const logs = captureLogs(options.logLevel ?? 'info');
  const extras: Connector[] = [];

  const connectorDeps = (logger: CapturedLogs['logger'], ownership = options.ownership): ConnectorDeps => ({
    config: stack.config,
    clients: stack.clients,
    logger,
    printTerminalQr: () => undefined,
    commandWaitSeconds: 1,
    ...(ownership ? { ownership } : {}),
    ...(options.webhookDelivery === false ? { webhookDelivery: false } : {}),
    ...(options.qrTimeoutMs ? { qrTimeoutMs: options.qrTimeoutMs } : {}),
  });

  let connector = await startConnector(connectorDeps(logs.logger));

  const gateway: Gateway = {
    config: stack.config,
    stack,
    table,
    queues,
    sandbox,
    control: sandboxControl(descriptor.controlUrl),
    webhooks,
    logs,
    get connector() {
      return connector;
    },
    env: { ...stack.env, ...sandboxEnv, TABLE_NAME: stack.config.TABLE_NAME },
    async restartConnector() {
      await connector.stop();
      connector = await startConnector(connectorDeps(logs.logger));
      return connector;
    },
    async stopConnector() {
      await connector.stop();
    },
    async startExtraConnector(extraOptions = {}) {
      const extraLogs = captureLogs(options.logLevel ?? 'info');
      const extra = await startConnector(connectorDeps(extraLogs.logger, extraOptions.ownership ?? options.ownership));
      extras.push(extra);
      return { connector: extra, logs: extraLogs };
    },
    async linkAccount(accountId, phone, linkOptions = {}) {
      const source = linkOptions.logs ?? logs;
      const qr = await source.waitForQr(accountId, { from: linkOptions.logsFrom ?? 0 });
      await gateway.control.scan(phone, qr);
      await gateway.waitForStatus(accountId, 'connected');
    },
    async waitForStatus(accountId, status, timeoutMs = 60_000) {
      await waitFor(`${accountId} to be ${status}`, async () => (await findAccount(table, accountId, true))?.status === status, {
        timeoutMs,
      });
    },
    async stop() {
      const errors: unknown[] = [];
      const attempt = async (work: () => Promise<unknown>) => {
        try {
          await work();
        } catch (error) {
          errors.push(error);
        }
      };
      for (const extra of extras) await attempt(() => extra.stop());
      await attempt(() => connector.stop());
      await attempt(() => webhooks.close());
      await attempt(() => sandbox.stop());
      await attempt(() => stack.stop());
      if (errors.length > 0) throw errors[0];
    },
  };
  return gateway;
}
