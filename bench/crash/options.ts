/**
 * Settings of `npm run bench:crash`: each one from a flag (`--runs 1`, `--runs=1`) or from its
 * environment variable (BENCH_CRASH_RUNS=1); the flag wins. Sizes default to the full benchmark;
 * a development run shrinks them, e.g. `npm run bench:crash -- --runs 1 --inbound-messages 100
 * --outage-seconds 20 --scenarios inbound,outage`.
 */
const SCENARIOS = ['inbound', 'sends', 'outage', 'stop'] as const;
type Scenario = (typeof SCENARIOS)[number];

export interface CrashOptions {
  runs: number;
  scenarios: Scenario[];
  /** Gateway log level; the QR line is at info, so nothing quieter. */
  logLevel: 'info' | 'debug' | 'trace';
  /** Keep the temporary data directories (gateway data and logs) for inspection. */
  keepData: boolean;
  inbound: {
    messages: number;
    killAfter: number;
    senderConcurrency: number;
    /** Messages per second the phone offers; 0 = as fast as the sandbox accepts (one burst). */
    rate: number;
    quietSeconds: number;
    capSeconds: number;
  };
  sends: { count: number; killAfter: number; waitSeconds: number };
  outage: { seconds: number; messages: number; mode: 'refused' | '503'; capSeconds: number };
  stop: { accounts: number; linkConcurrency: number; capSeconds: number };
}

interface Setting<T> {
  flag: string;
  env: string;
  fallback: T;
  parse: (raw: string, name: string) => T;
}

const positive = (raw: string, name: string): number => {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
};
const count = (raw: string, name: string): number => {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be an integer >= 0, got "${raw}"`);
  return value;
};
const oneOf =
  <T extends string>(values: readonly T[]) =>
  (raw: string, name: string): T => {
    const found = values.find((v) => v === raw);
    if (!found) throw new Error(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
    return found;
  };
const listOf =
  <T extends string>(values: readonly T[]) =>
  (raw: string, name: string): T[] =>
    raw
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => oneOf(values)(part, name));
const flagOn = (raw: string) => raw === '1' || raw === 'true' || raw === '';

function argumentValues(argv: string[]): Map<string, string> {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}" (settings are --name value or --name=value)`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (inline !== undefined) values.set(name, inline);
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--')) values.set(name, argv[++i]!);
    else values.set(name, '');
  }
  return values;
}

export function parseCrashOptions(argv: string[], env: NodeJS.ProcessEnv): CrashOptions {
  const args = argumentValues(argv);
  const known = new Set<string>();
  const read = <T>({ flag, env: envName, fallback, parse }: Setting<T>): T => {
    known.add(flag);
    const raw = args.get(flag) ?? env[envName];
    return raw === undefined ? fallback : parse(raw, `--${flag} (${envName})`);
  };
  const setting = <T>(flag: string, fallback: T, parse: Setting<T>['parse']): T =>
    read({ flag, env: `BENCH_CRASH_${flag.toUpperCase().replaceAll('-', '_')}`, fallback, parse });

  const options: CrashOptions = {
    runs: setting('runs', 3, positive),
    scenarios: setting('scenarios', [...SCENARIOS], listOf(SCENARIOS)),
    logLevel: setting('log-level', 'info' as const, oneOf(['info', 'debug', 'trace'] as const)),
    keepData: setting('keep-data', false, flagOn),
    inbound: {
      messages: setting('inbound-messages', 1000, positive),
      killAfter: setting('inbound-kill-after', 300, positive),
      senderConcurrency: setting('inbound-sender-concurrency', 10, positive),
      rate: setting('inbound-rate', 0, count),
      quietSeconds: setting('inbound-quiet-seconds', 75, positive),
      capSeconds: setting('inbound-cap-seconds', 600, positive),
    },
    sends: {
      count: setting('sends', 100, positive),
      killAfter: setting('sends-kill-after', 40, positive),
      waitSeconds: setting('sends-wait-seconds', 150, positive),
    },
    outage: {
      seconds: setting('outage-seconds', 180, positive),
      messages: setting('outage-messages', 18, positive),
      mode: setting('outage-mode', 'refused' as const, oneOf(['refused', '503'] as const)),
      capSeconds: setting('outage-cap-seconds', 300, positive),
    },
    stop: {
      accounts: setting('stop-accounts', 50, count),
      linkConcurrency: setting('stop-link-concurrency', 8, positive),
      capSeconds: setting('stop-cap-seconds', 60, positive),
    },
  };
  const unknown = [...args.keys()].filter((name) => !known.has(name));
  if (unknown.length > 0) throw new Error(`unknown setting(s): ${unknown.map((n) => `--${n}`).join(', ')}`);
  if (options.inbound.killAfter > options.inbound.messages) throw new Error('--inbound-kill-after must not exceed --inbound-messages');
  if (options.sends.killAfter > options.sends.count) throw new Error('--sends-kill-after must not exceed --sends');
  return options;
}

/** The settings table printed at the top of a run (every figure below depends on them). */
export function describeOptions(options: CrashOptions): string {
  const { inbound, sends, outage, stop } = options;
  return [
    `runs ${options.runs}; scenarios ${options.scenarios.join(', ')}`,
    `inbound: ${inbound.messages} messages${inbound.rate ? ` at ${inbound.rate}/s` : ' in one burst'}, SIGKILL after ${inbound.killAfter} posted, settle: ${inbound.quietSeconds} s quiet (cap ${inbound.capSeconds} s)`,
    `sends: ${sends.count} parallel, SIGKILL after ${sends.killAfter} answered, wait ${sends.waitSeconds} s after the restart`,
    `outage: receiver ${outage.mode === 'refused' ? 'resetting every connection' : 'answering 503'} for ${outage.seconds} s, ${outage.messages} messages during it, wait cap ${outage.capSeconds} s after recovery`,
    `stop: SIGTERM with 0 and ${stop.accounts} connected accounts (cap ${stop.capSeconds} s, then SIGKILL)`,
  ].join('\n');
}
