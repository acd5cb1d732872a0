import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useChildCleanup } from '../../support/child-cleanup.js';
import { createClients, destroyClients } from '../../../core/aws.js';
import { loadConfig } from '../../../core/config.js';
import { putMessage } from '../../../core/store/messages.js';
import { tableOf } from '../../../core/store/table.js';
import { localDefaults } from '../../../infra/local/start.js';

const root = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

interface Running {
  child: ChildProcess;
  apiUrl: string;
  endpoints: { dynamodb: string; s3: string; sqs: string };
  lines: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
}

const cleanup = useChildCleanup();

/**
 * `npm start`'s script as a child process, with only the variables a fresh clone would have.
 * tsx is loaded in-process (`--import tsx`) rather than through its CLI: the CLI relays signals
 * to its child and SIGKILLs it when the child does not acknowledge within 30 ms, which a loaded
 * 2-core machine can miss.
 */
async function start(dataDir: string): Promise<Running> {
  const launched = launch(dataDir);
  const ready = new Promise<Pick<Running, 'apiUrl' | 'endpoints'>>((resolveReady, reject) => {
    launched.onLine((entry, lines) => {
      const aws = lines.find((l) => l.msg === 'embedded AWS started');
      if (entry.msg === 'connector started' && aws) {
        const listening = lines.find((l) => l.msg === 'API listening');
        resolveReady({ apiUrl: String(listening?.url), endpoints: aws.endpoints as Running['endpoints'] });
      }
    });
    void launched.exited.then((code) => reject(new Error(`npm start exited early with ${code}`)));
  });
  return { ...launched, ...(await ready) };
}

/** The script as a child process, with only the variables a fresh clone would have, and its JSON lines. */
function launch(dataDir: string) {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'info',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/start.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanup.track(child);
  const lines: Array<Record<string, unknown>> = [];
  const listeners: Array<(entry: Record<string, unknown>, all: typeof lines) => void> = [];
  // 'close', not 'exit': the last log lines may still be in the pipe when the process exits.
  const exited = new Promise<number | null>((resolveExit) => child.once('close', (code) => resolveExit(code)));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    lines.push(entry);
    for (const listener of listeners) listener(entry, lines);
  });
  return { child, lines, exited, onLine: (listener: (typeof listeners)[number]) => listeners.push(listener) };
}

/** Ctrl-C (SIGINT) or a service manager's SIGTERM: the stack stops, says so, and exits 0. */
async function stopWith(running: Running, signal: 'SIGINT' | 'SIGTERM' = 'SIGINT'): Promise<void> {
  running.child.kill(signal);
  expect(await running.exited).toBe(0);
  expect(running.lines.some((l) => l.msg === 'stopped')).toBe(true);
}

describe('npm start (infra/local/start.ts)', () => {
  it('serves /ping and accounts, stops cleanly on Ctrl-C (and SIGTERM), and a second start finds accounts and messages', async () => {
    const dataDir = await cleanup.tempDir('wa-start-');
    const id = `start${Date.now().toString(36)}`;
    const chatId = '15551234567@s.whatsapp.net';

    const first = await start(dataDir);
    expect(first.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const url of Object.values(first.endpoints)) expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const ping = (await (await fetch(`${first.apiUrl}/ping`)).json()) as Record<string, unknown>;
    expect(ping).toMatchObject({ ok: true, pong: true });
    const created = await fetch(`${first.apiUrl}/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, name: 'Kept' }),
    });
    expect(created.status).toBe(201);
    // A message as the connector would store it, written straight into the embedded DynamoDB.
    const config = loadConfig({
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_ENDPOINT_URL_DYNAMODB: first.endpoints.dynamodb,
    });
    const clients = createClients(config);
    await putMessage(tableOf(config, clients), id, {
      messageId: 'KEPT1',
      from: chatId,
      chatId,
      timestamp: 1_700_000_000_000,
      type: 'text',
      fromMe: false,
      text: 'still here',
    });
    destroyClients(clients);
    await stopWith(first, 'SIGINT');

    const second = await start(dataDir);
    const account = (await (await fetch(`${second.apiUrl}/accounts/${id}`)).json()) as Record<string, unknown>;
    expect(account).toMatchObject({ ok: true, account: { _id: id, name: 'Kept' } });
    const messages = (await (await fetch(`${second.apiUrl}/accounts/${id}/chats/${chatId}/messages`)).json()) as {
      messages: Array<{ messageId: string; text: string }>;
    };
    expect(messages.messages).toEqual([expect.objectContaining({ messageId: 'KEPT1', text: 'still here' })]);
    await stopWith(second, 'SIGTERM');
  });
});

describe('npm start stopped while starting', () => {
  it('stops what has started and exits 0 on Ctrl-C during start-up, before the connector starts', async () => {
    const dataDir = await cleanup.tempDir('wa-start-abort-');
    const launched = launch(dataDir);
    await new Promise<void>((resolveSeen) =>
      launched.onLine((entry) => {
        if (entry.msg === 'embedded AWS started') resolveSeen();
      }),
    );
    launched.child.kill('SIGINT');
    expect(await launched.exited).toBe(0);
    expect(launched.lines.some((l) => l.msg === 'stopped')).toBe(true);
    expect(launched.lines.some((l) => l.msg === 'connector started')).toBe(false);
    expect(launched.lines.some((l) => l.level === 'fatal' || l.msg === 'stop failed')).toBe(false);
  });
});

describe('npm start defaults', () => {
  it('allows private webhook targets (receivers on this machine) unless WEBHOOK_ALLOW_PRIVATE is set', () => {
    expect(loadConfig(localDefaults({})).WEBHOOK_ALLOW_PRIVATE).toBe(true);
    expect(loadConfig(localDefaults({ WEBHOOK_ALLOW_PRIVATE: '' })).WEBHOOK_ALLOW_PRIVATE).toBe(true);
    expect(loadConfig(localDefaults({ WEBHOOK_ALLOW_PRIVATE: 'false' })).WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(loadConfig({}).WEBHOOK_ALLOW_PRIVATE).toBe(false);
  });
});
