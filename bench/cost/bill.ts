import { emfMetricNames } from '../../connector/metrics/emf.js';
/**
 * What bench:cost counted, as one map of meter lines, and what it costs at AWS list prices.
 * Lines: `ddb req <Action> <scope>` (requests), `ddb wt|wi|r|w <kind> <scope>` (write units of
 * the table and of index copies, read units, item writes), `sqs <Action> fifo|standard`, `s3 <PUT|GET|LIST|
 * DELETE>`, `api <method>`. A scope is `account` (the item or key belongs to one account) or
 * `fixed` (the deployment's own: heartbeats, shard leases, queue polls, the accounts listing).
 */
import { dynamoTotals } from './dynamo-meter.js';
import { httpTotals } from './http-meter.js';

export type Usage = Map<string, number>;

/**
 * us-east-1 list prices, read 29 November 2026 (docs/deploy-aws.md, Cost): DynamoDB on demand
 * since the November 2024 cut; Fargate and Lambda for arm64 (the stack's default).
 */
const PRICES = {
  writeUnit: 0.625 / 1e6,
  readUnit: 0.125 / 1e6,
  sqsFifo: 0.5 / 1e6,
  sqsStandard: 0.4 / 1e6,
  s3Put: 0.005 / 1000,
  s3Get: 0.0004 / 1000,
  httpApiRequest: 1.0 / 1e6,
  lambdaRequest: 0.2 / 1e6,
  lambdaGbSecond: 0.0000133334,
  fargateVcpuHour: 0.03238,
  fargateGbHour: 0.00356,
  publicIpv4Hour: 0.005,
  customMetricMonth: 0.3,
} as const;
export const HOURS_PER_MONTH = 730;
/** The connector's EMF line as deployed by default (docs/connector.md, Metrics): one set per deployment. */
const CUSTOM_METRICS = emfMetricNames(false).length;
/** The API function's memory (infra/aws/api.ts). */
export const LAMBDA_GB = 0.5;

export function snapshot(): Usage {
  const usage: Usage = new Map();
  const { requests, units } = dynamoTotals();
  for (const [name, n] of requests) usage.set(`ddb req ${name}`, n);
  for (const [name, n] of dynamoTotals().requestKinds) usage.set(`ddb rk ${name}`, n);
  for (const [name, entry] of units) {
    if (entry.writeTable) usage.set(`ddb wt ${name}`, entry.writeTable);
    if (entry.writeIndex) usage.set(`ddb wi ${name}`, entry.writeIndex);
    if (entry.read) usage.set(`ddb r ${name}`, entry.read);
    if (entry.writes) usage.set(`ddb w ${name}`, entry.writes);
  }
  for (const [name, n] of httpTotals()) usage.set(name, n);
  return usage;
}

/** `after - before`, line by line. */
export function difference(after: Usage, before: Usage): Usage {
  const result: Usage = new Map();
  for (const [name, n] of after) {
    const d = n - (before.get(name) ?? 0);
    if (d !== 0) result.set(name, d);
  }
  return result;
}

/** `a + factor × b`, line by line (factor -1 subtracts). */
export function combine(a: Usage, b: Usage, factor = 1): Usage {
  const result: Usage = new Map(a);
  for (const [name, n] of b) result.set(name, (result.get(name) ?? 0) + factor * n);
  return result;
}

export const scale = (usage: Usage, factor: number): Usage => new Map([...usage].map(([name, n]) => [name, n * factor]));

/** The lines of one scope (`account` or `fixed`; SQS, S3 and API lines count as `fixed`). */
export function ofScope(usage: Usage, scope: 'account' | 'fixed'): Usage {
  return new Map([...usage].filter(([name]) => (name.endsWith(' account') ? 'account' : 'fixed') === scope));
}

const sum = (usage: Usage, test: (name: string) => boolean) => [...usage].reduce((total, [name, n]) => (test(name) ? total + n : total), 0);

/** AWS requests (DynamoDB, SQS, S3), as the SDKs send them. */
export const awsRequests = (usage: Usage) =>
  sum(usage, (name) => name.startsWith('ddb req ') || name.startsWith('sqs ') || name.startsWith('s3 '));

export interface BillLine {
  line: string;
  quantity: string;
  dollars: number;
}

const millions = (n: number) => `${(n / 1e6).toFixed(2)} M`;

/** A month of `usage` (already scaled to the month) by bill line, at PRICES. */
export function billOf(usage: Usage, extra: { lambdaGbSeconds?: number } = {}): BillLine[] {
  const writeTable = sum(usage, (n) => n.startsWith('ddb wt '));
  const writeIndex = sum(usage, (n) => n.startsWith('ddb wi '));
  const reads = sum(usage, (n) => n.startsWith('ddb r '));
  const fifo = sum(usage, (n) => n.startsWith('sqs ') && n.endsWith(' fifo'));
  const standard = sum(usage, (n) => n.startsWith('sqs ') && n.endsWith(' standard'));
  const s3Put = sum(usage, (n) => n === 's3 PUT' || n === 's3 LIST');
  const s3Get = sum(usage, (n) => n === 's3 GET');
  const api = sum(usage, (n) => n.startsWith('api '));
  const lines: BillLine[] = [
    { line: 'DynamoDB write units, table', quantity: millions(writeTable), dollars: writeTable * PRICES.writeUnit },
    { line: 'DynamoDB write units, index copies', quantity: millions(writeIndex), dollars: writeIndex * PRICES.writeUnit },
    { line: 'DynamoDB read units', quantity: millions(reads), dollars: reads * PRICES.readUnit },
    { line: 'SQS FIFO requests', quantity: millions(fifo), dollars: fifo * PRICES.sqsFifo },
    { line: 'SQS standard requests', quantity: millions(standard), dollars: standard * PRICES.sqsStandard },
    {
      line: 'S3 PUT/LIST + GET requests',
      quantity: `${millions(s3Put)} + ${millions(s3Get)}`,
      dollars: s3Put * PRICES.s3Put + s3Get * PRICES.s3Get,
    },
    { line: 'HTTP API + Lambda requests', quantity: millions(api), dollars: api * (PRICES.httpApiRequest + PRICES.lambdaRequest) },
  ];
  if (extra.lambdaGbSeconds) {
    lines.push({
      line: 'Lambda duration',
      quantity: `${(extra.lambdaGbSeconds / 1e3).toFixed(1)} k GB-s`,
      dollars: extra.lambdaGbSeconds * PRICES.lambdaGbSecond,
    });
  }
  return lines;
}

export const total = (lines: BillLine[]) => lines.reduce((t, l) => t + l.dollars, 0);

/** The monthly lines that do not follow requests: tasks, their public IPv4, the custom metrics. */
export function fixedLines(tasks: number, vcpu = 0.5, gb = 1): BillLine[] {
  return [
    { line: 'CloudWatch custom metrics (EMF)', quantity: `${CUSTOM_METRICS}`, dollars: CUSTOM_METRICS * PRICES.customMetricMonth },
    {
      line: `Fargate arm64, ${tasks} × (${vcpu} vCPU, ${gb} GB)`,
      quantity: `${tasks * HOURS_PER_MONTH} task-h`,
      dollars: tasks * HOURS_PER_MONTH * (vcpu * PRICES.fargateVcpuHour + gb * PRICES.fargateGbHour),
    },
    { line: 'public IPv4 of the tasks', quantity: `${tasks}`, dollars: tasks * HOURS_PER_MONTH * PRICES.publicIpv4Hour },
  ];
}

/** The write and read units of `usage` by item kind, largest first (for the per-line view). */
export function unitsByKind(usage: Usage): Array<{ kind: string; writeTable: number; writeIndex: number; read: number; writes: number }> {
  const kinds = new Map<string, { kind: string; writeTable: number; writeIndex: number; read: number; writes: number }>();
  for (const [name, n] of usage) {
    const match = /^ddb (wt|wi|r|w) (.+) (account|fixed)$/.exec(name);
    if (!match) continue;
    const kind = (match[2] ?? '').replace(/ \(read\)$/, '');
    const entry = kinds.get(kind) ?? { kind, writeTable: 0, writeIndex: 0, read: 0, writes: 0 };
    if (match[1] === 'wt') entry.writeTable += n;
    else if (match[1] === 'wi') entry.writeIndex += n;
    else if (match[1] === 'w') entry.writes += n;
    else entry.read += n;
    kinds.set(kind, entry);
  }
  return [...kinds.values()].sort((a, b) => b.writeTable + b.writeIndex + b.read / 5 - (a.writeTable + a.writeIndex + a.read / 5));
}

/** DynamoDB requests of `usage` by action and the kinds of item they name, largest first. */
export function requestsByItemKind(usage: Usage): Array<[string, number]> {
  return [...usage]
    .filter(([name, n]) => name.startsWith('ddb rk ') && Math.abs(n) > 0.005)
    .map(([name, n]): [string, number] => [name.slice('ddb rk '.length), n])
    .sort((a, b) => b[1] - a[1]);
}

/** Requests of `usage` by line, largest first: `ddb req PutItem account` → `PutItem`. */
export function requestsByLine(usage: Usage): Array<[string, number]> {
  const lines = new Map<string, number>();
  for (const [name, n] of usage) {
    const dynamo = /^ddb req (\S+) /.exec(name);
    const line = dynamo ? dynamo[1] : name.startsWith('sqs ') || name.startsWith('s3 ') ? name : undefined;
    if (line) lines.set(line, (lines.get(line) ?? 0) + n);
  }
  return [...lines].filter(([, n]) => Math.abs(n) > 1e-9).sort((a, b) => b[1] - a[1]);
}
