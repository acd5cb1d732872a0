import { describe, expect, it } from 'vitest';
import { parseCrashOptions } from '../../bench/crash/options.js';
import { deliverySummary } from '../../bench/crash/receiver.js';

describe('bench:crash settings', () => {
  it('defaults to the full benchmark: 3 runs of every scenario at the stated sizes', () => {
    const options = parseCrashOptions([], {});
    expect(options.runs).toBe(3);
    expect(options.scenarios).toEqual(['inbound', 'sends', 'outage', 'stop']);
    expect(options.inbound).toMatchObject({ messages: 1000, killAfter: 300, rate: 0 });
    expect(options.sends).toMatchObject({ count: 100, killAfter: 40, waitSeconds: 150 });
    expect(options.outage).toMatchObject({ seconds: 180, mode: 'refused' });
    expect(options.stop.accounts).toBe(50);
  });

  it('reads BENCH_CRASH_* variables, and a flag (--name value or --name=value) wins over its variable', () => {
    const options = parseCrashOptions(['--runs', '1', '--outage-mode=503', '--scenarios', 'inbound,stop'], {
      BENCH_CRASH_RUNS: '5',
      BENCH_CRASH_INBOUND_MESSAGES: '100',
      BENCH_CRASH_INBOUND_KILL_AFTER: '30',
    });
    expect(options.runs).toBe(1);
    expect(options.outage.mode).toBe('503');
    expect(options.scenarios).toEqual(['inbound', 'stop']);
    expect(options.inbound).toMatchObject({ messages: 100, killAfter: 30 });
  });

  it('refuses unknown settings, bad values and a kill point beyond the burst', () => {
    expect(() => parseCrashOptions(['--run', '1'], {})).toThrow('unknown setting(s): --run');
    expect(() => parseCrashOptions(['--runs', '0'], {})).toThrow('--runs (BENCH_CRASH_RUNS) must be a positive integer');
    expect(() => parseCrashOptions([], { BENCH_CRASH_SCENARIOS: 'inbound,crash' })).toThrow('must be one of inbound, sends, outage, stop');
    expect(() => parseCrashOptions(['--sends', '10'], {})).toThrow('--sends-kill-after must not exceed --sends');
  });
});

describe('bench:crash webhook deliveries', () => {
  it('counts distinct messages and the POSTs beyond the first per event, among the messages asked for', () => {
    const deliveries = [
      { key: 'a:1', messageId: '1', at: 1 },
      { key: 'a:1', messageId: '1', at: 2 },
      { key: 'a:2', messageId: '2', at: 3 },
      { key: 'a:3', messageId: '3', at: 4 },
      { key: 'a:3', messageId: '3', at: 5 },
    ];
    const { messageIds, duplicates } = deliverySummary(deliveries, new Set(['1', '2']));
    expect([...messageIds]).toEqual(['1', '2']);
    expect(duplicates).toBe(1);
  });
});
