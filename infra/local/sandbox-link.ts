import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, loadConfig } from '../../core/config.js';
import { readStackFile } from './stack-file.js';

/**
 * `npm run sandbox:link -- <accountId> <phone>`: links a gateway account to a sandbox phone
 * with HTTP only, the way a person scans the QR with WhatsApp. It creates the phone when
 * needed, takes the account's current QR from the API (`GET /accounts/:accountId/qr`, or
 * `--qr <text>`), lets the phone scan it (the sandbox's `POST /scan`) and waits for
 * `connected`. The URLs come from DATA_DIR/local-stack.json, written by
 * `npm start -- --sandbox`.
 */
export interface LinkTarget {
  apiUrl: string;
  sandboxControlUrl: string;
  /** Sent as `x-api-key` when the gateway checks keys. */
  apiKey?: string;
}

export interface LinkRequest {
  accountId: string;
  phone: string;
  /** The QR text; fetched from the API when absent. */
  qr?: string;
  /** How long to wait for the QR, then for `connected`. */
  timeoutMs?: number;
}

export interface LinkResult {
  accountId: string;
  phone: string;
  /** The linked device's JID on the sandbox; absent when the account was already connected. */
  jid?: string;
  status: 'connected';
}

export class LinkError extends Error {
  override name = 'LinkError';
}

const POLL_MS = 250;
const DEFAULT_TIMEOUT_MS = 60_000;
const pause = (ms: number) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

async function callJson(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    throw new LinkError(`cannot reach ${new URL(url).origin} (${(error as Error).message}): is \`npm start -- --sandbox\` running?`);
  }
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { error: text };
  }
  return { status: response.status, body };
}

const errorOf = (body: Record<string, unknown>) => String(body.error ?? JSON.stringify(body));

export async function linkOnSandbox(target: LinkTarget, request: LinkRequest): Promise<LinkResult> {
  const { accountId, phone } = request;
  const deadline = Date.now() + (request.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const apiHeaders: Record<string, string> = target.apiKey ? { 'x-api-key': target.apiKey } : {};
  const accountUrl = `${target.apiUrl}/accounts/${encodeURIComponent(accountId)}`;
  const statusOf = async () => {
    const { status, body } = await callJson(accountUrl, { headers: apiHeaders });
    if (status === 404) throw new LinkError(`no account "${accountId}": create it first (POST /accounts {"id":"${accountId}"})`);
    if (status !== 200) throw new LinkError(`GET /accounts/${accountId}: ${status} ${errorOf(body)}`);
    return String((body.account as Record<string, unknown> | undefined)?.currentStatus);
  };

  const created = await callJson(`${target.sandboxControlUrl}/phones`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ phone }),
  });
  if (created.status !== 200 && created.status !== 201) throw new LinkError(`sandbox phone ${phone}: ${errorOf(created.body)}`);

  const before = await statusOf();
  if (before === 'connected') return { accountId, phone, status: 'connected' };
  if (before === 'logged_out' || before === 'not_started') {
    throw new LinkError(`account "${accountId}" is ${before}, not waiting for a scan: POST /accounts/${accountId}/connect first`);
  }

  const qr = request.qr ?? (await currentQr(accountUrl, apiHeaders, deadline));
  const scanned = await callJson(`${target.sandboxControlUrl}/scan`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ phone, qr }),
  });
  if (scanned.status !== 200) throw new LinkError(`scan: ${scanned.status} ${errorOf(scanned.body)}`);

  // The device is linked; the account turns connected after the restart that follows pairing.
  for (;;) {
    if ((await statusOf()) === 'connected') return { accountId, phone, jid: String(scanned.body.jid), status: 'connected' };
    if (Date.now() > deadline) throw new LinkError(`account "${accountId}" did not turn connected in time`);
    await pause(POLL_MS);
  }
}

/** The QR the account shows now; the first one appears a moment after the account is created. */
async function currentQr(accountUrl: string, headers: Record<string, string>, deadline: number): Promise<string> {
  for (;;) {
    const { status, body } = await callJson(`${accountUrl}/qr`, { headers });
    if (status === 200 && typeof body.qr === 'string') return body.qr;
    if (status === 404 && body.error === 'Not found') {
      throw new LinkError('this gateway has no GET /accounts/:accountId/qr: pass the QR text with --qr');
    }
    if (status !== 404) throw new LinkError(`GET /accounts/:accountId/qr: ${status} ${errorOf(body)}`);
    if (Date.now() > deadline) throw new LinkError('no QR appeared in time');
    await pause(POLL_MS);
  }
}

/** `<accountId> <phone> [--qr <text>]` */
export function parseLinkArgs(args: string[]): LinkRequest {
  const positional: string[] = [];
  let qr: string | undefined;
  for (let i = 0; i < args.length; i += 1) {
    if (args[i] === '--qr') qr = args[(i += 1)];
    else positional.push(args[i]!);
  }
  const [accountId, phone] = positional;
  if (!accountId || !phone || positional.length > 2 || (args.includes('--qr') && !qr)) {
    throw new LinkError('usage: npm run sandbox:link -- <accountId> <phone> [--qr <QR text>]');
  }
  return { accountId, phone, ...(qr ? { qr } : {}) };
}

async function main(): Promise<void> {
  const request = parseLinkArgs(process.argv.slice(2));
  const dataDir = resolve(loadConfig().DATA_DIR);
  const stack = await readStackFile(dataDir);
  if (!stack?.sandboxControlUrl) {
    throw new LinkError(`no sandbox stack in ${dataDir}: start one with \`npm start -- --sandbox\` (same DATA_DIR)`);
  }
  // API_KEY may list several keys (rotation): any one of them opens the API.
  const apiKey = process.env.API_KEY?.split(',')[0]?.trim();
  const result = await linkOnSandbox(
    { apiUrl: stack.apiUrl, sandboxControlUrl: stack.sandboxControlUrl, ...(apiKey ? { apiKey } : {}) },
    request,
  );
  process.stdout.write(`${JSON.stringify({ ok: true, ...result })}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    const known = error instanceof LinkError || error instanceof ConfigError;
    process.stderr.write(`sandbox:link: ${known ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
