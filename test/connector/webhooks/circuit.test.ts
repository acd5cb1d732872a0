import { describe, expect, it } from 'vitest';
import { Circuits } from '../../../connector/webhooks/circuit.js';

const url = 'https://receiver.example/hook';
const settings = { failureThreshold: 3, probeBaseMs: 1_000, probeMaxMs: 4_000 };

describe('webhook circuit per URL', () => {
  it('stays closed below the threshold, and a success forgets the failures', () => {
    const circuits = new Circuits(settings);
    expect(circuits.record(url, false, 'post', 0)).toBeUndefined();
    expect(circuits.record(url, false, 'post', 0)).toBeUndefined();
    expect(circuits.record(url, true, 'post', 0)).toBeUndefined();
    expect(circuits.record(url, false, 'post', 0)).toBeUndefined();
    expect(circuits.record(url, false, 'post', 0)).toBeUndefined();
    expect(circuits.admit(url, 0)).toBe('post');
  });

  it('opens after the threshold: events are parked until the probe is due, and one probe at a time goes out', () => {
    const circuits = new Circuits(settings);
    circuits.record(url, false, 'post', 0);
    circuits.record(url, false, 'post', 0);
    expect(circuits.record(url, false, 'post', 0)).toBe('opened');
    expect(circuits.admit(url, 500)).toBe('park');
    expect(circuits.dueProbes(500)).toEqual([]);
    expect(circuits.dueProbes(1_000)).toEqual([url]);
    expect(circuits.admit(url, 1_000)).toBe('probe');
    expect(circuits.admit(url, 1_001)).toBe('park');
    expect(circuits.dueProbes(1_001)).toEqual([]);
  });

  it('a failed probe doubles the wait up to the maximum; a probe answered 2xx closes the circuit', () => {
    const circuits = new Circuits(settings);
    for (let i = 0; i < 3; i += 1) circuits.record(url, false, 'post', 0);
    let now = 1_000;
    const waits: number[] = [];
    for (let probe = 0; probe < 4; probe += 1) {
      expect(circuits.admit(url, now)).toBe('probe');
      circuits.record(url, false, 'probe', now);
      const due = [1, 2, 4, 8, 16].map((s) => now + s * 1_000).find((t) => circuits.dueProbes(t).length > 0);
      waits.push((due ?? 0) - now);
      now = due ?? now;
    }
    expect(waits).toEqual([2_000, 4_000, 4_000, 4_000]);
    // A late failure of a POST admitted before the circuit opened changes nothing.
    expect(circuits.record(url, false, 'post', now)).toBeUndefined();
    expect(circuits.admit(url, now)).toBe('probe');
    expect(circuits.record(url, true, 'probe', now)).toBe('closed');
    expect(circuits.isOpen(url)).toBe(false);
    expect(circuits.admit(url, now)).toBe('post');
  });

  it('keeps each URL apart', () => {
    const circuits = new Circuits(settings);
    for (let i = 0; i < 3; i += 1) circuits.record(url, false, 'post', 0);
    expect(circuits.admit(url, 0)).toBe('park');
    expect(circuits.admit('https://other.example/hook', 0)).toBe('post');
  });
});
