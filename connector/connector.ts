import { createDynamoClients, destroyDynamoClients, type AwsClients } from '../core/aws.js';
import { CONNECTOR_CLIENT_OPTIONS } from './aws-transport.js';
import type { Config } from '../core/config.js';
import { logger as rootLogger, type Logger } from '../core/logger.js';
import { mediaStoreOf } from '../core/media-store.js';
import { createQueues } from '../core/queues.js';
import { STORED_FORMATS } from '../core/store/heartbeats.js';
import { tableOf } from '../core/store/table.js';
import { installConsoleCapture } from './console-capture.js';
import { lazyInboundPipeline } from './lazy-inbound.js';
import { lifecycleHandlers } from './commands/lifecycle-handlers.js';
import type { CommandHandlers } from './commands/outcome.js';
import { pairingHandlers } from './commands/pairing-handlers.js';
import { groupHandlers } from './commands/group-handlers.js';
import { sendHandlers } from './commands/send-handlers.js';
import { SendPauses } from './commands/send-pauses.js';
import { historyMediaHandlers } from './history/media-fetch.js';
import { historyRequestHandlers } from './history/request-handler.js';
import { kindHandlers } from './commands/kind-handlers.js';
import { networkOptionsFrom } from './network/network-options.js';
import { newOwnerId, Ownership, type OwnershipTiming } from './ownership/ownership.js';
import { startShardBalancer, type ShardBalancer } from './ownership/shard-balancer.js';
import { ConnectorHeartbeat } from './ownership/heartbeat.js';
import { exposedFullCollection, startIdleCollector, type IdleCollector } from './idle-collector.js';
import { accountsPerShard } from './ownership/fair-share.js';
import { ConnectorMetrics } from './metrics/connector-metrics.js';
import { startMetricsServer } from './metrics/metrics-server.js';
import { startEmfLines } from './metrics/emf.js';
import { ShardCommands } from './commands/shard-commands.js';
import { shardOf } from '../core/shards.js';
import type { InboundHandlers } from './session/event-dispatcher.js';
import { sessionEvents } from './session/session-events.js';
import { SessionRegistry } from './session/session-registry.js';
import { Pacer, pacedSessionOf } from './pacing/pacer.js';
import { pacingHandlers } from './commands/pacing-handlers.js';
import { runCommand } from './commands/outcome.js';
import { startWebhookDelivery } from './webhooks/delivery-worker.js';
import type { EventPublisher } from './inbound/event-publisher.js';
import { WaVersionKeeper } from './wa-version/wa-version-keeper.js';
import { waVersionSourcesFrom } from './wa-version/sources.js';

export interface ConnectorDeps {
  config: Config;
  clients: AwsClients;
  logger?: Logger;
  /**
   * Where terminal QR drawings go; by default stdout when it is a terminal, and nowhere otherwise
   * (a container's or CI's output is a log, not a screen: the QR is in its structured line there).
   */
  printTerminalQr?: (text: string) => void;
  /** Lease timings (default: LEASE_TTL_MS, LEASE_RENEW_MS, OWNERSHIP_SCAN_MS of the config). */
  ownership?: Partial<OwnershipTiming>;
  /** Long-poll seconds of the command consumer (default 20; a stop ends the receive out with a wake-up message). */
  commandWaitSeconds?: number;
  /** How long a send waits for a reconnecting account before failing. */
  sendWaitForConnectedMs?: number;
  /** The inbound pipeline; defaults to connector/inbound's, storing to this config's table. */
  inbound?: InboundHandlers;
  /** Run the webhook delivery worker in this process (default true). */
  webhookDelivery?: boolean;
  /** How long each QR lives (tests shorten it; by default WhatsApp's 60 s, then 20 s). */
  qrTimeoutMs?: number;
}

export interface Connector {
  /** This process's name in lease records. */
  ownerId: string;
  registry: SessionRegistry;
  /** The shards this connector owns now (scale-out). */
  shards: ReadonlySet<number>;
  /** Prometheus metrics, when METRICS_PORT is set. */
  metricsUrl?: string;
  /**
   * Stops consuming (commands received but not started go back to the queue at once), lets
   * commands and webhook POSTs in flight finish (6 s and 5 s at most), closes the sockets in
   * parallel (bounded each), releases leases. Within seconds; under the 30 s ECS gives.
   */
  stop(): Promise<void>;
}

/**
 * The long-lived connector: resumes every account it can own, then serves commands from SQS
 * and keeps the ownership loops running. Nothing here is global, so tests run several
 * connectors in one process against one table.
 */
export async function startConnector(deps: ConnectorDeps): Promise<Connector> {
  const { config, clients } = deps;
  const logger = deps.logger ?? rootLogger;
  // Before any socket exists: libsignal prints session keys to the console otherwise.
  installConsoleCapture(logger);
  const table = tableOf(config, clients);
  const mediaStore = mediaStoreOf(config, clients);
  const queues = createQueues(config, clients, logger);
  const configured = networkOptionsFrom(config);
  const network = deps.qrTimeoutMs ? { ...configured, socket: { ...configured.socket, qrTimeout: deps.qrTimeoutMs } } : configured;
  const sessionStatuses = () => registry.accountIds().flatMap((id) => registry.get(id)?.status ?? []);
  // Started once the accounts are running (below); the metrics read its busy share when it runs.
  let idleCollector: IdleCollector | undefined;
  const metrics = new ConnectorMetrics({
    shardsOwned: () => ownedShards.size,
    sessionStatuses,
    sqs: clients.sqs,
    webhookQueueUrl: () => queues.webhookQueueUrl(),
    eventLoopBusyShare: () => idleCollector?.busyShare,
    waVersion: () => waVersion.current(),
  });
  // Events go out straight from this process (connector/webhooks/straight-delivery.ts), from the
  // first account's first session.status on; with no worker here, to the webhook queue.
  const webhooks = deps.webhookDelivery === false ? undefined : startWebhookDelivery({ config, clients, logger, queues });
  const publisher: EventPublisher = { publish: (event) => (webhooks ? webhooks.publish(event) : queues.sendWebhookEvent(event)) };
  const inbound = metrics.wrapInbound(deps.inbound ?? lazyInboundPipeline({ config, clients, logger, queues, events: publisher }));
  const timing: OwnershipTiming = {
    leaseTtlMs: config.LEASE_TTL_MS,
    renewEveryMs: config.LEASE_RENEW_MS,
    scanEveryMs: config.OWNERSHIP_SCAN_MS,
    ...deps.ownership,
  };
  const ownerId = newOwnerId();
  // Holds every account and shard lease of this process: beats in a loop of its own from here
  // on, on connections of its own.
  const heartbeatClients = createDynamoClients(config, CONNECTOR_CLIENT_OPTIONS);
  const heartbeat = await ConnectorHeartbeat.start({
    table: tableOf(config, heartbeatClients),
    connectorId: ownerId,
    ttlMs: timing.leaseTtlMs,
    everyMs: timing.renewEveryMs,
    logger,
    ...(config.SIGNAL_SESSIONS_PLAIN ? { reads: STORED_FORMATS.filter((format) => format !== 'deflated-sessions') } : {}),
  });
  const ownership = new Ownership(table, ownerId, timing, heartbeat);
  const shardCount = config.COMMAND_SHARDS;
  // Kept up to date by the shard balancer: an account is this connector's when its shard is.
  const ownedShards = new Set<number>();
  const isMine = (accountId: string) => ownedShards.has(shardOf(accountId, shardCount));
  // Shards whose accounts were resumed here: from then on their count of sessions is the
  // shard's running accounts, which the balancer shares on the shard lease (docs/design.md, Scale-out).
  const resumedShards = new Set<number>();
  // Before any socket: every socket announces the version it resolves.
  const waVersion = await WaVersionKeeper.start({ table, logger, ...waVersionSourcesFrom(config, network.mode) });
  const events = sessionEvents(publisher, logger);
  const sendPauses = new SendPauses({ table, events, logger, minMs: config.SEND_PAUSE_MIN_MS });
  // Sends claimed by the send path, so that the pacer counts the ones it handed to WhatsApp.
  const claimed = new Set<string>();
  let handlers: CommandHandlers | undefined;
  const pacer = new Pacer({
    table,
    logger,
    events: publisher,
    session: (accountId) => pacedSessionOf(registry.get(accountId)),
    async send(send) {
      if (!handlers) throw new Error('the command handlers are not ready');
      claimed.delete(send.payload.messageId);
      await runCommand(handlers, send);
      return claimed.delete(send.payload.messageId);
    },
    pausedUntil: (accountId) => sendPauses.active(accountId)?.until,
  });
  const registry = new SessionRegistry({
    table,
    network,
    ownership,
    inbound,
    logger,
    printTerminalQr: deps.printTerminalQr ?? ((text) => process.stdout.isTTY && process.stdout.write(text)),
    events,
    sendPauses,
    waVersion,
    isMine,
    pacing: config.SEND_PACING_DEFAULT === 'on',
    pacer,
  });
  // Sockets first: the shard balancer's own listener (below) then stops the shards' commands.
  heartbeat.onLost((why) => {
    metrics.recordHeartbeatLoss();
    void registry.dropAll(why);
  });
  logger.info({ ownerId: ownership.ownerId, network: network.mode }, 'connector starting');
  // Served before the accounts resume: resuming a thousand takes minutes, and that is when the
  // sessions' statuses and the process's memory are worth watching.
  const metricsServer =
    config.METRICS_PORT === undefined ? undefined : await startMetricsServer(metrics.registry, config.METRICS_PORT, config.HOST);
  if (metricsServer) logger.info({ url: metricsServer.url }, 'metrics served');

  const sendDeps = {
    table,
    mediaStore,
    registry,
    ownership,
    inbound,
    logger,
    waitForConnectedMs: deps.sendWaitForConnectedMs ?? Math.min(10_000, config.SEND_TIMEOUT_MS / 2),
    ackWaitMs: config.SEND_ACK_WAIT_MS,
    sendPauses,
    onClaimed: (messageId: string) => claimed.add(messageId),
  };
  handlers = metrics.wrapHandlers({
    ...lifecycleHandlers({ table, mediaStore, registry, ownership, logger }),
    ...sendHandlers(sendDeps),
    ...pairingHandlers({ table, registry, ownership, logger }),
    ...kindHandlers(sendDeps),
    ...historyRequestHandlers(sendDeps),
    ...historyMediaHandlers(sendDeps),
    ...pacingHandlers({ pacer, ownership }),
    ...groupHandlers({
      table,
      registry,
      ownership,
      logger,
      waitForConnectedMs: deps.sendWaitForConnectedMs ?? Math.min(10_000, config.SEND_TIMEOUT_MS / 2),
    }),
  });
  // After the handlers: resumed sessions replay their queued sends through them.
  await registry.begin();
  // A wake-up saying shards were handed here runs a balancing round at once; one that comes
  // while the first round still resumes accounts waits for the balancer to exist.
  let balancer: ShardBalancer | undefined;
  let handedBeforeStart = false;
  const commands = new ShardCommands({
    queues,
    handlers,
    logger,
    ...(deps.commandWaitSeconds !== undefined ? { waitSeconds: deps.commandWaitSeconds } : {}),
    onShardsHanded: () => {
      if (balancer) balancer.wake();
      else handedBeforeStart = true;
    },
  });
  // Hand-over order (docs/design.md, Scale-out): a shard's accounts are resumed before its queue
  // is polled, so that its first commands find their sessions; on release its commands stop
  // first, then its sockets close and their leases go, then the shard lease.
  const shards = await startShardBalancer({
    table,
    ownerId: ownership.ownerId,
    heartbeat,
    shardCount,
    everyMs: timing.renewEveryMs,
    logger,
    owned: ownedShards,
    running() {
      const counts = new Map<number, number>();
      for (const shard of resumedShards) counts.set(shard, 0);
      for (const accountId of registry.accountIds()) {
        const shard = shardOf(accountId, shardCount);
        const count = counts.get(shard);
        if (count !== undefined) counts.set(shard, count + 1);
      }
      return counts;
    },
    listRunning: async () => accountsPerShard(await registry.runningAccountIds(), shardCount),
    async onAcquired(acquired) {
      await registry.resume();
      // A resume can take minutes: a shard given up meanwhile (rebalance, stop) is not polled.
      for (const shard of acquired) {
        if (!ownedShards.has(shard)) continue;
        resumedShards.add(shard);
        commands.start(shard);
      }
    },
    async onReleasing(shard, lost) {
      resumedShards.delete(shard);
      await commands.stop(shard);
      await registry.handOver((accountId) => shardOf(accountId, shardCount) === shard, { lost });
    },
    wakeHolderOf: (shard) => queues.commandQueue(shard).wakeReceivers({ shardsHanded: true }),
  });
  balancer = shards;
  if (handedBeforeStart) shards.wake();

  const stopEmf = config.METRICS_EMF
    ? startEmfLines(metrics, undefined, { detail: config.METRICS_EMF_DETAIL, perCache: config.METRICS_EMF_CACHES })
    : undefined;
  const fullCollection = exposedFullCollection();
  idleCollector =
    config.IDLE_COLLECT_MS > 0 && fullCollection
      ? startIdleCollector({
          everyMs: config.IDLE_COLLECT_MS,
          collect: fullCollection,
          traffic: () => metrics.traffic(),
          logger,
          onCollected: ({ seconds }) => metrics.recordIdleCollection(seconds),
        })
      : undefined;
  if (config.IDLE_COLLECT_MS > 0 && !fullCollection) logger.info('idle heap collection off: node runs without --expose-gc');
  logger.info({ ownerId: ownership.ownerId, shards: ownedShards.size, accounts: registry.accountIds().length }, 'connector started');

  let stopping: Promise<void> | undefined;
  return {
    ownerId: ownership.ownerId,
    registry,
    shards: ownedShards,
    ...(metricsServer ? { metricsUrl: metricsServer.url } : {}),
    stop() {
      stopping ??= (async () => {
        logger.info('connector stopping');
        // Before anything that waits (the consumer's long poll, commands in flight): a reconnect
        // firing during that wait would open a new socket in a process that is going away.
        registry.haltReconnects();
        waVersion.stop();
        // Each shard: its commands stop, its sockets close, its leases go; then the heartbeat
        // that held them.
        await Promise.all([shards.stop(), webhooks?.stop()]);
        await registry.closeAll();
        await heartbeat.stop().catch((error: unknown) => logger.warn({ err: error }, 'removing the heartbeat failed'));
        destroyDynamoClients(heartbeatClients);
        // Webhook events and acks still lingering for a batch go out before the process exits.
        await queues.flush();
        stopEmf?.();
        await idleCollector?.stop();
        await metricsServer?.close();
        logger.info('connector stopped');
      })();
      return stopping;
    },
  };
}
