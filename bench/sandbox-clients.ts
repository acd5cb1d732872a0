/**
 * A worker of `bench/sandbox.ts`: links its share of Baileys clients to the sandbox and makes
 * them exchange texts in pairs on command. Baileys gives every socket its own
 * AsyncLocalStorage, which makes every promise cost O(sockets) in one process (unless Node 22
 * runs with --experimental-async-context-frame, which bench/sandbox.ts passes): spreading the
 * clients over a few processes keeps the load generator from being the bottleneck.
 */
import { makeWASocket, type WASocket } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import type { SandboxDescriptor } from '../sandbox/index.js';
import { sandboxSocketOptions } from '../sandbox/client.js';
import { memoryAuthState } from '../test/sandbox/support/memory-auth.js';

export type ToWorker =
  | { type: 'link'; descriptor: SandboxDescriptor; phones: string[] }
  | { type: 'send'; messagesPerClient: number; label: string }
  | { type: 'stop' };

export type FromWorker =
  | { type: 'linked'; count: number }
  | { type: 'received'; total: number }
  | { type: 'sent' }
  | { type: 'closed'; code: number }
  | { type: 'error'; message: string };

const LINK_CONCURRENCY = 5;
const silent = pino({ level: 'silent' });

interface Client {
  phone: string;
  sock: WASocket;
}

const clients: Client[] = [];
let received = 0;
let stopping = false;
const send = (msg: FromWorker) => process.send?.(msg);

async function control(descriptor: SandboxDescriptor, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${descriptor.controlUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
}

function link(descriptor: SandboxDescriptor, phone: string): Promise<Client> {
  const auth = memoryAuthState();
  let linked = false;
  return new Promise((resolve, reject) => {
    const open = () => {
      const sock = makeWASocket({ ...sandboxSocketOptions(descriptor), auth, logger: silent, markOnlineOnConnect: false });
      sock.ev.on('creds.update', (update) => Object.assign(auth.creds, update));
      sock.ev.on('messages.upsert', ({ messages }) => {
        for (const m of messages) {
          if (!m.key.fromMe && (m.message?.conversation || m.message?.extendedTextMessage)) received++;
        }
      });
      sock.ev.on('connection.update', ({ connection, qr, lastDisconnect }) => {
        if (qr) control(descriptor, '/scan', { phone, qr }).catch(reject);
        if (connection === 'open' && !linked) {
          linked = true;
          resolve({ phone, sock });
        }
        if (connection === 'close') {
          const code = (lastDisconnect?.error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode ?? 0;
          if (code === 515) open();
          else if (!linked) reject(new Error(`client ${phone} closed with ${code}`));
          else if (!stopping) send({ type: 'closed', code });
        }
      });
    };
    open();
  });
}

const partnerJid = (i: number) => `${clients[i % 2 === 0 ? i + 1 : i - 1]!.phone}@s.whatsapp.net`;

process.on('message', (msg: ToWorker) => {
  const run = async () => {
    switch (msg.type) {
      case 'link':
        for (const phone of msg.phones) await control(msg.descriptor, '/phones', { phone });
        for (let i = 0; i < msg.phones.length; i += LINK_CONCURRENCY) {
          clients.push(...(await Promise.all(msg.phones.slice(i, i + LINK_CONCURRENCY).map((p) => link(msg.descriptor, p)))));
        }
        send({ type: 'linked', count: clients.length });
        return;
      case 'send':
        await Promise.all(
          clients.map(async (c, i) => {
            for (let n = 0; n < msg.messagesPerClient; n++) await c.sock.sendMessage(partnerJid(i), { text: `${msg.label} ${n}` });
          }),
        );
        send({ type: 'sent' });
        return;
      case 'stop':
        stopping = true;
        await Promise.all(clients.map((c) => c.sock.end(undefined)));
        process.exit(0);
    }
  };
  run().catch((err: unknown) => send({ type: 'error', message: String(err) }));
});

setInterval(() => send({ type: 'received', total: received }), 100).unref();
