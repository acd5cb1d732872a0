import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useChildCleanup } from '../../support/child-cleanup.js';
import { terminalQrPrinter } from '../../../infra/local/start.js';

const root = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

interface Running {
  child: ChildProcess;
  apiUrl: string;
  controlUrl: string;
  lines: Array<Record<string, unknown>>;
  stderr: () => string;
  exited: Promise<number | null>;
}

const cleanup = useChildCleanup();

/** Free ports everywhere: the sandbox's fixed defaults may be taken on a shared machine. */
const baseEnv = (dataDir: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  DATA_DIR: dataDir,
  PORT: '0',
  SANDBOX_PORT: '0',
  SANDBOX_CONTROL_PORT: '0',
  SANDBOX_MEDIA_PORT: '0',
  LOG_LEVEL: 'info',
});

/** `npm start -- --sandbox` as a child process, ready once it logs its start-up summary. */
async function start(env: NodeJS.ProcessEnv, args: string[]): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/start.ts', ...args], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanup.track(child);
  const lines: Array<Record<string, unknown>> = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const ready = new Promise<{ apiUrl: string; controlUrl: string }>((resolveReady, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      lines.push(entry);
      if (entry.msg === 'ready') resolveReady({ apiUrl: String(entry.apiUrl), controlUrl: String(entry.sandboxControlUrl) });
    });
    void exited.then((code) => reject(new Error(`npm start exited early with ${code}`)));
  });
  return { child, lines, stderr: () => stderr, exited, ...(await ready) };
}

async function stopWithCtrlC(running: Running): Promise<void> {
  running.child.kill('SIGINT');
  expect(await running.exited).toBe(0);
}

/** `npm run sandbox:link -- …` as a child process. */
function link(dataDir: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolveRun) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'infra/local/sandbox-link.ts', ...args],
      { cwd: root, env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir } },
      (error, stdout, stderr) => resolveRun({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function call(url: string, init?: { method?: string; body?: unknown }): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: init?.method ?? 'GET',
    ...(init?.body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(init.body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('npm start -- --sandbox', () => {
  it('runs the sandbox in the stack: create, link with sandbox:link, send, receive over HTTP; the link survives a restart', async () => {
    const dataDir = await cleanup.tempDir('wa-trial-');
    const accountId = 'alice';
    const phone = '15550000001';
    const friend = '15550000002';

    const first = await start(baseEnv(dataDir), ['--sandbox']);
    expect(first.lines.find((l) => l.msg === 'ready')).toMatchObject({
      network: 'sandbox',
      docsUrl: `${first.apiUrl}/docs`,
      dashboardUrl: `${first.apiUrl}/dashboard/`,
      dataDir,
      auth: 'off',
    });
    expect(first.controlUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const missing = await link(dataDir, [accountId, phone]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('create it first');

    const created = await call(`${first.apiUrl}/accounts`, { method: 'POST', body: { id: accountId } });
    expect(created.status).toBe(201);
    const linked = await link(dataDir, [accountId, phone]);
    expect(linked.stderr).toBe('');
    expect(JSON.parse(linked.stdout)).toMatchObject({ ok: true, accountId, phone, status: 'connected' });
    expect((await call(`${first.apiUrl}/accounts/${accountId}`)).body).toMatchObject({ account: { currentStatus: 'connected' } });

    expect((await call(`${first.controlUrl}/phones`, { method: 'POST', body: { phone: friend } })).status).toBe(201);
    const sent = await call(`${first.apiUrl}/accounts/${accountId}/message/send`, {
      method: 'POST',
      body: { to: `${friend}@s.whatsapp.net`, message: 'hi from alice' },
    });
    expect(sent).toMatchObject({ status: 200, body: { ok: true } });
    await expect
      .poll(async () => (await call(`${first.controlUrl}/phones/${friend}/messages`)).body.messages, { timeout: 30_000 })
      .toEqual([expect.objectContaining({ text: 'hi from alice' })]);

    const reply = await call(`${first.controlUrl}/phones/${friend}/messages`, { method: 'POST', body: { to: phone, text: 'hello back' } });
    expect(reply.status).toBe(200);
    const chatMessages = `${first.apiUrl}/accounts/${accountId}/chats/${friend}@s.whatsapp.net/messages`;
    await expect
      .poll(async () => (await call(chatMessages)).body.messages, { timeout: 30_000 })
      .toContainEqual(expect.objectContaining({ text: 'hello back', fromMe: false }));

    // Not a terminal: JSON lines only on stdout (parsed above), and no QR drawing anywhere.
    expect(first.stderr()).not.toContain('QR code for account');

    // Linking again is a no-op for a connected account.
    const again = await link(dataDir, [accountId, phone]);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, status: 'connected' });
    await stopWithCtrlC(first);

    // WA_NETWORK=sandbox is the same as --sandbox; the sandbox's state under DATA_DIR keeps the link.
    const second = await start({ ...baseEnv(dataDir), WA_NETWORK: 'sandbox' }, []);
    await expect
      .poll(async () => (await call(`${second.apiUrl}/accounts/${accountId}`)).body, { timeout: 60_000 })
      .toMatchObject({ account: { currentStatus: 'connected' } });
    expect(second.lines.some((l) => l.event === 'qr')).toBe(false);
    await stopWithCtrlC(second);
    // Two starts of the whole stack in child processes, each waited for by its condition: on a
    // busy machine (a benchmark beside the suite) that is more than the default minute.
  }, 240_000);

  it('refuses WA_* settings next to --sandbox, which would point the connector elsewhere', async () => {
    const dataDir = await cleanup.tempDir('wa-trial-');
    const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/start.ts', '--sandbox'], {
      cwd: root,
      env: { ...baseEnv(dataDir), WA_WS_URL: 'ws://127.0.0.1:1/ws/chat' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanup.track(child);
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const code = await new Promise<number | null>((resolveExit) => child.once('exit', (exitCode) => resolveExit(exitCode)));
    expect(code).toBe(1);
    expect(stdout).toContain('leave WA_WS_URL, WA_ROOT_PUBLIC_KEY and WA_MEDIA_CA_FILE unset');
  });
});

describe('the QR drawing of npm start', () => {
  it('is drawn on a terminal for real WhatsApp only', () => {
    const drawn: string[] = [];
    const terminal = { isTTY: true, write: (text: string) => drawn.push(`tty:${text}`) };
    const pipe = { isTTY: false, write: (text: string) => drawn.push(`pipe:${text}`) };
    terminalQrPrinter(true, terminal)('▄▄');
    terminalQrPrinter(true, pipe)('▄▄');
    terminalQrPrinter(false, terminal)('▄▄');
    expect(drawn).toEqual(['tty:▄▄']);
  });
});
