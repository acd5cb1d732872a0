import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { cacheSizes, type CacheSize } from '../../core/bounded-cache.js';
import type { AccountStatus } from '../../core/schemas/account.js';
import { waVersionText, type WaVersion, type WaVersionSource } from '../../core/wa-version.js';
import type { CommandHandlers, CommandOutcome } from '../commands/outcome.js';
import type { InboundHandlers } from '../session/event-dispatcher.js';
import type { WAMessage } from '@whiskeysockets/baileys';

/** What the gauges read when scraped. */
export interface MetricSources {
  shardsOwned(): number;
  /** Status of every session this connector runs. */
  sessionStatuses(): AccountStatus[];
  sqs: SQSClient;
  webhookQueueUrl(): Promise<string>;
  /** The event loop's busy share over the idle collector's last span, when it runs. */
  eventLoopBusyShare?(): number | undefined;
  /** The WhatsApp Web version the sockets announce, and where it came from. */
  waVersion?(): { version: WaVersion; source: WaVersionSource };
}

/** Baileys' stub type of a message it could not decrypt (WAMessageStubType.CIPHERTEXT). */
const CIPHERTEXT_STUB = 2;
/** The webhook backlog costs one SQS request; scrapes within this reuse the last answer. */
const BACKLOG_CACHE_MS = 15_000;
const SEND_TYPES = new Set(['send_text', 'send_reply', 'send_media', 'send_reaction']);

/**
 * One connector's operations metrics (docs/connector.md, Metrics) in a registry of its own (tests
 * run several connectors in one process). Counters are fed by wrapping the command handlers and
 * the inbound handler; gauges are read on scrape.
 */
export class ConnectorMetrics {
  readonly registry = new Registry();
  private readonly inbound = new Counter({ name: 'wa_inbound_messages_total', help: 'Messages received', registers: [this.registry] });
  private readonly decryptFailures = new Counter({
    name: 'wa_decrypt_failures_total',
    help: 'Messages that arrived undecryptable',
    registers: [this.registry],
  });
  private readonly commands = new Counter({
    name: 'wa_commands_total',
    help: 'Commands handled, by type and outcome',
    labelNames: ['type', 'outcome'],
    registers: [this.registry],
  });
  private readonly sendLatency = new Histogram({
    name: 'wa_send_duration_seconds',
    help: 'Time a send command took in the connector, by type',
    labelNames: ['type'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20],
    registers: [this.registry],
  });
  private readonly idleCollections = new Histogram({
    name: 'wa_idle_collection_seconds',
    help: 'Full heap collections run while the connector was quiet (connector/idle-collector.ts): the pause each took',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2],
    registers: [this.registry],
  });
  private readonly heartbeatLosses = new Counter({
    name: 'wa_heartbeat_losses_total',
    help: 'Times the heartbeat holding every lease was lost (declared dead, or not extended in time): each closed every socket here',
    registers: [this.registry],
  });
  private backlog: { at: number; value: number } | undefined;
  /** Messages received and commands handled so far: the idle collector's measure of traffic. */
  private handled = 0;

  constructor(private readonly sources: MetricSources) {
    const { registry } = this;
    const statuses = (wanted: AccountStatus) => () => sources.sessionStatuses().filter((status) => status === wanted).length;
    const gauge = (name: string, help: string, read: () => number | Promise<number>) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        async collect() {
          this.set(await read());
        },
      });
    gauge('wa_accounts_owned', 'Accounts with a session in this connector', () => sources.sessionStatuses().length);
    gauge('wa_accounts_connected', 'Accounts connected', statuses('connected'));
    gauge('wa_accounts_reconnecting', 'Accounts reconnecting', statuses('reconnecting'));
    gauge('wa_accounts_logged_out', 'Accounts logged out', statuses('logged_out'));
    gauge('wa_shards_owned', 'Shards this connector holds', () => sources.shardsOwned());
    gauge('wa_webhook_backlog', 'Webhook events waiting (approximate, whole queue)', () => this.webhookBacklog());
    gauge(
      'wa_event_loop_busy_share',
      "Share of the idle collector's last span the event loop was busy (0..1)",
      () => sources.eventLoopBusyShare?.() ?? 0,
    );
    gauge('wa_resident_memory_bytes', 'Resident set size of the process', () => process.memoryUsage().rss);
    // Where the RSS goes: the V8 heap as reserved and as used (live data plus garbage not collected
    // yet), and the memory of Buffers and other objects held outside it.
    new Gauge({
      name: 'wa_memory_bytes',
      help: 'Memory of the process by kind: heap_total, heap_used, external, array_buffers (process.memoryUsage)',
      labelNames: ['kind'],
      registers: [registry],
      collect() {
        const usage = process.memoryUsage();
        this.set({ kind: 'heap_total' }, usage.heapTotal);
        this.set({ kind: 'heap_used' }, usage.heapUsed);
        this.set({ kind: 'external' }, usage.external);
        this.set({ kind: 'array_buffers' }, usage.arrayBuffers);
      },
    });
    // Every BoundedCache of the process by name (core/bounded-cache.ts): what it holds, its bound
    // (the sum over its instances, e.g. one per account) and how many instances there are.
    const cacheGauge = (name: string, help: string, read: (size: CacheSize) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['cache'],
        registers: [registry],
        collect() {
          this.reset();
          for (const [cache, size] of Object.entries(cacheSizes())) this.set({ cache }, read(size));
        },
      });
    new Gauge({
      name: 'wa_version_info',
      help: 'The WhatsApp Web version new sockets announce (label version) and where it came from (source: live, published, pinned, setting); always 1',
      labelNames: ['version', 'source'],
      registers: [registry],
      collect() {
        this.reset();
        const current = sources.waVersion?.();
        if (current) this.set({ version: waVersionText(current.version), source: current.source }, 1);
      },
    });
    cacheGauge('wa_cache_entries', 'Entries held by the bounded caches of a name', (size) => size.entries);
    cacheGauge('wa_cache_max_entries', 'Bound on the entries of the caches of a name', (size) => size.maxEntries);
    cacheGauge('wa_cache_instances', 'Bounded caches alive under a name (e.g. one per account)', (size) => size.instances);
  }

  recordHeartbeatLoss(): void {
    this.heartbeatLosses.inc();
  }

  recordIdleCollection(seconds: number): void {
    this.idleCollections.observe(seconds);
  }

  /** Messages received and commands handled so far (a count that only grows). */
  traffic(): number {
    return this.handled;
  }

  /** The bounded caches by name, for the EMF lines (one line per cache). */
  cacheSizes(): Record<string, CacheSize> {
    return cacheSizes();
  }

  /** The handlers, each counting its commands and timing sends. */
  wrapHandlers(handlers: CommandHandlers): CommandHandlers {
    type Handler = (command: never) => Promise<CommandOutcome>;
    const wrapped: Record<string, Handler> = {};
    for (const [type, handler] of Object.entries(handlers) as [string, Handler][]) {
      wrapped[type] = async (command) => {
        const started = performance.now();
        this.handled += 1;
        try {
          const outcome = await handler(command);
          this.commands.inc({ type, outcome: outcome.kind });
          return outcome;
        } catch (error) {
          this.commands.inc({ type, outcome: 'error' });
          throw error;
        } finally {
          if (SEND_TYPES.has(type)) this.sendLatency.observe({ type }, (performance.now() - started) / 1000);
        }
      };
    }
    // Same keys, each handler with its own command type.
    return wrapped as unknown as CommandHandlers;
  }

  /** The inbound handler, counting messages and those that arrived undecryptable. */
  wrapInbound(inbound: InboundHandlers): InboundHandlers {
    const count = (type: string, messages: Iterable<WAMessage>) => {
      if (type !== 'notify') return;
      for (const message of messages) {
        if (message.key.fromMe) continue;
        this.handled += 1;
        this.inbound.inc();
        if (message.messageStubType === CIPHERTEXT_STUB) this.decryptFailures.inc();
      }
    };
    return {
      ...inbound,
      handleUpsert: (accountId, upsert, ctx) => {
        count(upsert.type, upsert.messages);
        return inbound.handleUpsert(accountId, upsert, ctx);
      },
      handleMessages: (accountId, messages, ctx) => {
        for (const { message, type } of messages) count(type, [message]);
        return inbound.handleMessages(accountId, messages, ctx);
      },
    };
  }

  /** Counter and gauge values for the EMF line (connector/metrics/emf.ts). */
  async snapshot(): Promise<Map<string, number>> {
    const values = new Map<string, number>();
    for (const metric of await this.registry.getMetricsAsJSON()) {
      // Per-cache values go out on lines of their own (emf.ts).
      if (String(metric.type) === 'histogram' || metric.name.startsWith('wa_cache_')) continue;
      values.set(
        metric.name,
        metric.values.reduce((sum, value) => sum + value.value, 0),
      );
    }
    return values;
  }

  private async webhookBacklog(): Promise<number> {
    if (this.backlog && Date.now() - this.backlog.at < BACKLOG_CACHE_MS) return this.backlog.value;
    try {
      const result = await this.sources.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: await this.sources.webhookQueueUrl(), AttributeNames: ['ApproximateNumberOfMessages'] }),
      );
      const value = Number(result.Attributes?.ApproximateNumberOfMessages ?? 0);
      this.backlog = { at: Date.now(), value };
      return value;
    } catch {
      return this.backlog?.value ?? 0;
    }
  }
}
