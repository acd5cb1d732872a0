/**
 * One circuit breaker per webhook target (its URL; a webhook id once registrations have one),
 * so that a receiver that is down is tested by one probe at a time instead of by every event on
 * every retry.
 *
 *   closed ──(failureThreshold failures in a row)──► open: events parked, probe due after probeBaseMs
 *   open ──(probe answered 2xx)──► closed: the caller releases the parked events
 *   open ──(probe failed)──► open: next probe after twice the wait, at most probeMaxMs
 *
 * This is one process's view, kept in step with the circuits every connector shares in DynamoDB
 * by shared-circuits.ts: an open circuit, its failed probes and its next probe time are stored
 * there (`adopt` takes them from there, `forget` closes what another connector closed); the
 * failures in a row that open one are counted here, per process.
 */
export interface CircuitSettings {
  /** Failed POSTs in a row that open a circuit. */
  failureThreshold: number;
  /** Wait before the first probe of an open circuit; doubles after each failed probe. */
  probeBaseMs: number;
  probeMaxMs: number;
}

/** What to do with an event for a target: POST it, POST it as the probe of an open circuit, or park it. */
export type Admission = 'post' | 'probe' | 'park';

/** A state change the caller acts on (log; release the parked events on `closed`). */
export type CircuitChange = 'opened' | 'closed' | undefined;

interface Circuit {
  failuresInARow: number;
  open: boolean;
  failedProbes: number;
  nextProbeAt: number;
  probeInFlight: boolean;
}

export class Circuits {
  private readonly circuits = new Map<string, Circuit>();

  constructor(private readonly settings: CircuitSettings) {}

  admit(target: string, now = Date.now()): Admission {
    const circuit = this.circuits.get(target);
    if (!circuit?.open) return 'post';
    if (circuit.probeInFlight || now < circuit.nextProbeAt) return 'park';
    circuit.probeInFlight = true;
    return 'probe';
  }

  /** Records the answer to a POST that `admit` allowed. */
  record(target: string, ok: boolean, admission: Exclude<Admission, 'park'>, now = Date.now()): CircuitChange {
    const circuit = this.circuits.get(target);
    if (ok) {
      if (!circuit) return undefined;
      // A success closes the circuit whichever POST it was: the receiver answers again.
      this.circuits.delete(target);
      return circuit.open ? 'closed' : undefined;
    }
    const current = circuit ?? { failuresInARow: 0, open: false, failedProbes: 0, nextProbeAt: 0, probeInFlight: false };
    this.circuits.set(target, current);
    if (current.open) {
      // A POST admitted before the circuit opened changes nothing; a failed probe waits longer.
      if (admission === 'probe') {
        current.probeInFlight = false;
        current.failedProbes += 1;
        current.nextProbeAt = now + this.probeDelayMs(current.failedProbes);
      }
      return undefined;
    }
    current.failuresInARow += 1;
    if (current.failuresInARow < this.settings.failureThreshold) return undefined;
    current.open = true;
    current.failedProbes = 0;
    current.nextProbeAt = now + this.probeDelayMs(0);
    return 'opened';
  }

  /**
   * Takes an open circuit as stored (opened by another connector, or its probe schedule moved
   * there); 'opened' when it was closed here. A probe out from here stays out.
   */
  adopt(target: string, shared: { failedProbes: number; nextProbeAt: number }): CircuitChange {
    const circuit = this.circuits.get(target);
    if (circuit?.open) {
      circuit.failedProbes = shared.failedProbes;
      if (!circuit.probeInFlight) circuit.nextProbeAt = shared.nextProbeAt;
      return undefined;
    }
    this.circuits.set(target, { failuresInARow: 0, open: true, probeInFlight: false, ...shared });
    return 'opened';
  }

  /** Closes a circuit another connector closed; 'closed' when it was open here. */
  forget(target: string): CircuitChange {
    const wasOpen = this.isOpen(target);
    this.circuits.delete(target);
    return wasOpen ? 'closed' : undefined;
  }

  /** A probe `admit` allowed that another connector holds, or whose time moved: look again at `at`. */
  deferProbe(target: string, at: number): void {
    const circuit = this.circuits.get(target);
    if (!circuit?.open) return;
    circuit.probeInFlight = false;
    circuit.nextProbeAt = at;
  }

  /** An open circuit's failed probes and next probe time (after `record`: what to store). */
  schedule(target: string): { failedProbes: number; nextProbeAt: number } | undefined {
    const circuit = this.circuits.get(target);
    return circuit?.open ? { failedProbes: circuit.failedProbes, nextProbeAt: circuit.nextProbeAt } : undefined;
  }

  openTargets(): string[] {
    return [...this.circuits.entries()].filter(([, circuit]) => circuit.open).map(([target]) => target);
  }

  /** Open circuits whose probe is due and not yet out. */
  dueProbes(now = Date.now()): string[] {
    return [...this.circuits.entries()]
      .filter(([, circuit]) => circuit.open && !circuit.probeInFlight && now >= circuit.nextProbeAt)
      .map(([target]) => target);
  }

  isOpen(target: string): boolean {
    return this.circuits.get(target)?.open ?? false;
  }

  private probeDelayMs(failedProbes: number): number {
    return Math.min(this.settings.probeMaxMs, this.settings.probeBaseMs * 2 ** Math.min(failedProbes, 30));
  }
}
