import { randomUUID } from 'node:crypto';
import type { Logger } from '../../core/logger.js';
import type { Table } from '../../core/store/table.js';
import { claimProbe, closeCircuit, listOpenCircuits, openCircuit, probeFailed } from '../../core/store/webhook-circuits.js';
import type { Admission, CircuitChange, Circuits } from './circuit.js';
import { targetForLogs } from './targets/dispatch.js';

/**
 * The circuits of this process (circuit.ts) in step with those every connector shares in
 * DynamoDB (core/store/webhook-circuits.ts), so that a target known to be down stays parked
 * after a crash and on every connector, is probed by one connector at a time on one schedule,
 * and, once a probe answers, is released by all of them within a sync.
 *
 * What it costs: nothing while a target answers (admit and record read and write nothing for a
 * closed circuit); a write when a circuit opens (and a read when another connector had opened it
 * first); per probe time a claim attempt from each connector holding events for the target
 * (conditional: of two connectors one wins) plus one write when the probe fails or closes it;
 * and one Query of the open circuits per connector every `syncOpenMs` while any is open, every
 * `syncIdleMs` otherwise (to learn of circuits opened elsewhere).
 *
 * A write that fails leaves the process with its own view, as before circuits were shared: it
 * still parks and probes on its own, and the next sync brings it back in step.
 */
export interface SharedCircuitSettings {
  /** How long a probe's claim holds others off: longer than a POST may take. */
  probeClaimMs: number;
  syncOpenMs: number;
  syncIdleMs: number;
}

export class SharedCircuits {
  /** This process, as a prober. */
  private readonly owner = randomUUID();
  /** Open here and stored as open: a sync that no longer finds one learns it closed. */
  private readonly stored = new Set<string>();
  private nextSyncAt = 0;
  private syncing: Promise<Array<[string, CircuitChange]>> | undefined;

  constructor(
    private readonly circuits: Circuits,
    private readonly table: Table,
    private readonly settings: SharedCircuitSettings,
    private readonly log: Logger,
  ) {}

  /** As Circuits.admit, a probe only once this process holds the shared claim on it. */
  async admit(target: string, now = Date.now()): Promise<Admission> {
    const admission = this.circuits.admit(target, now);
    if (admission !== 'probe' || !this.stored.has(target)) return admission;
    const claimed = await claimProbe(this.table, target, this.owner, now + this.settings.probeClaimMs, now).catch((error: unknown) => {
      this.log.warn({ err: error, url: targetForLogs(target) }, 'webhook probe claim failed: probing on this connector alone');
      return true;
    });
    if (claimed) return 'probe';
    // Taken, not due by the shared schedule, or closed elsewhere: the next sync says which.
    this.circuits.deferProbe(target, now + this.settings.syncOpenMs);
    return 'park';
  }

  /** As Circuits.record, the change stored for every connector. */
  async record(target: string, ok: boolean, admission: Exclude<Admission, 'park'>, now = Date.now()): Promise<CircuitChange> {
    const change = this.circuits.record(target, ok, admission, now);
    try {
      if (change === 'opened') await this.storeOpen(target, now);
      else if (change === 'closed') {
        this.stored.delete(target);
        await closeCircuit(this.table, target);
      } else if (admission === 'probe' && !ok && this.stored.has(target)) {
        const schedule = this.circuits.schedule(target);
        if (schedule) await probeFailed(this.table, target, this.owner, schedule.failedProbes, schedule.nextProbeAt, now);
      }
    } catch (error) {
      this.log.warn(
        { err: error, url: targetForLogs(target), change },
        'webhook circuit not stored: this connector keeps its own view until the next sync',
      );
    }
    return change;
  }

  /**
   * Reads the open circuits when a sync is due (`force`: now) and brings this process in step:
   * circuits opened elsewhere are adopted (parked here too), those closed elsewhere are closed
   * here. Answers the changes for the caller to act on (release the parked events of a closed one).
   */
  sync(now = Date.now(), force = false): Promise<Array<[string, CircuitChange]>> {
    if (this.syncing || (!force && now < this.nextSyncAt)) return this.syncing ?? Promise.resolve([]);
    this.syncing = this.syncNow(now).finally(() => {
      this.syncing = undefined;
      const open = this.circuits.openTargets().length > 0;
      this.nextSyncAt = Date.now() + (open ? this.settings.syncOpenMs : this.settings.syncIdleMs);
    });
    return this.syncing;
  }

  private async syncNow(now: number): Promise<Array<[string, CircuitChange]>> {
    const shared = await listOpenCircuits(this.table);
    const changes: Array<[string, CircuitChange]> = [];
    const found = new Set<string>();
    for (const circuit of shared) {
      found.add(circuit.target);
      this.stored.add(circuit.target);
      changes.push([circuit.target, this.circuits.adopt(circuit.target, circuit)]);
    }
    for (const target of this.circuits.openTargets()) {
      if (found.has(target)) continue;
      // Opened here while the store could not be written: stored now.
      if (!this.stored.has(target)) await this.storeOpen(target, now).catch(() => undefined);
      else {
        this.stored.delete(target);
        changes.push([target, this.circuits.forget(target)]);
      }
    }
    return changes.filter(([, change]) => change !== undefined);
  }

  /** Stores a circuit opened here; one another connector opened first keeps its schedule. */
  private async storeOpen(target: string, now: number): Promise<void> {
    const schedule = this.circuits.schedule(target);
    if (!schedule) return;
    const stored = await openCircuit(this.table, target, schedule.nextProbeAt, now);
    this.stored.add(target);
    if (stored.openedAt !== now || stored.nextProbeAt !== schedule.nextProbeAt) this.circuits.adopt(target, stored);
  }
}
