import { Hono, type Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { z } from 'zod';
import type { SandboxCore } from './core.js';
import { PairingError } from './network/pairing.js';
import { CallError } from './network/calls.js';
import { lidJid, pnJid } from './network/jids.js';
import type { Account } from './network/model.js';
import { kickAllDevices, kickDevice, KICK_KINDS } from './kicks.js';
import { findReceived, sendPhoneReceipts, type PhoneReceiptType } from './phone/receipts.js';
import { parseWaVersion } from '../core/wa-version.js';
import { seedHistory } from './phone/history.js';
import { expireKeptMedia } from './phone/media-retry.js';

const phoneSchema = z.string().regex(/^[0-9]{5,20}$/, 'phone must be 5-20 digits');
const createPhoneSchema = z.object({ phone: phoneSchema, pushName: z.string().min(1).max(100).optional() });
const scanSchema = z.object({ phone: phoneSchema, qr: z.string().min(1).max(2000) });
const pairSchema = z.object({ phone: phoneSchema, code: z.string().min(1).max(20) });
const sendSchema = z.object({ to: z.string().min(1).max(100), text: z.string().min(1).max(65_536) });
const callSchema = z.object({ to: z.string().min(1).max(100), video: z.boolean().optional() });
const endCallSchema = z.object({ callId: z.string().min(1).max(64) });
const kickSchema = z.object({ phone: phoneSchema, device: z.number().int().min(1).max(999).optional(), kind: z.enum(KICK_KINDS) });
const versionText = z.string().refine((text) => parseWaVersion(text) !== undefined, 'must look like 2.3000.1234567');
const versionSchema = z.object({ current: versionText.optional(), minimum: versionText.nullable().optional() });
const limitsSchema = z.object({
  phone: phoneSchema,
  error: z.union([z.literal(429), z.literal(463)]),
  count: z.number().int().min(0).max(100_000),
  delayMs: z.number().int().min(0).max(600_000).optional(),
});
const withholdSchema = z.object({ phone: phoneSchema, count: z.number().int().min(0).max(100_000) });
const historySeedSchema = z.object({
  chats: z.number().int().min(1).max(10_000),
  messagesPerChat: z.number().int().min(1).max(10_000),
  days: z.number().int().min(1).max(3650).optional(),
  media: z.number().int().min(0).max(100).optional(),
});
const historyPushSchema = z.object({ kind: z.enum(['recent', 'full']) });
const mediaExpireSchema = z.object({ messageId: z.string().min(1).max(128), phoneKeeps: z.boolean().optional() });
const phoneReceiptSchema = z.object({
  messageIds: z.array(z.string().min(1).max(128)).min(1).max(1000),
  chatJid: z.string().min(1).max(100).optional(),
});

async function body<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new HTTPException(400, { message: 'body must be JSON' });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new HTTPException(400, { message: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') });
  }
  return parsed.data;
}

function accountOf(core: SandboxCore, phone: string): Account {
  const account = phoneSchema.safeParse(phone).success ? core.network.accounts.get(phone) : undefined;
  if (!account) throw new HTTPException(404, { message: 'unknown phone' });
  return account;
}

function describe(core: SandboxCore, account: Account) {
  return {
    phone: account.phone,
    pushName: account.pushName,
    jid: pnJid(account.phone),
    lid: lidJid(account.lid),
    // `unreceipted`: messages written to the device that it has not receipted or acked yet (a
    // kick now would bring them to it again).
    devices: [...account.devices.values()].map((d) => ({
      device: d.device,
      jid: pnJid(account.phone, d.device),
      platform: d.platform,
      unreceipted: d.unreceipted.size,
    })),
    // Group metadata queries the account's devices asked since the sandbox started (not persisted).
    groupMetadataQueries: core.network.groups.metadataQueriesOf(account.phone),
  };
}

/** The JSON control API: phones, scans, pairing codes, phone-sent messages, phone inbox and receipts, calls, kicks, send refusals, client versions, health. */
export function createControlApi(core: SandboxCore): Hono {
  const app = new Hono();

  app.get('/health', (c) => {
    const cpu = process.cpuUsage();
    return c.json({
      ok: true,
      accounts: core.network.accounts.size(),
      online: core.network.onlineCount(),
      undelivered: core.network.undelivered(),
      rssBytes: process.memoryUsage().rss,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    });
  });

  app.post('/phones', async (c) => {
    const { phone, pushName } = await body(c, createPhoneSchema);
    const { account, created } = core.network.accounts.create(phone, pushName);
    return c.json(describe(core, account), created ? 201 : 200);
  });

  app.get('/phones/:phone', (c) => c.json(describe(core, accountOf(core, c.req.param('phone')))));

  app.post('/scan', async (c) => {
    const { phone, qr } = await body(c, scanSchema);
    try {
      return c.json(await core.scan(phone, qr));
    } catch (err) {
      if (err instanceof PairingError) throw new HTTPException(err.status, { message: err.message });
      throw err;
    }
  });

  /** The phone enters a pairing code; this route's failures carry `ok: false` like its success `ok: true`. */
  app.post('/pair', async (c) => {
    const { phone, code } = await body(c, pairSchema);
    try {
      return c.json({ ok: true, ...(await core.pairByCode(phone, code)) });
    } catch (err) {
      if (err instanceof PairingError) return c.json({ ok: false, error: err.message }, err.status);
      throw err;
    }
  });

  app.post('/phones/:phone/messages', async (c) => {
    const account = accountOf(core, c.req.param('phone'));
    const { to, text } = await body(c, sendSchema);
    const target = core.network.accounts.resolve(to.includes('@') ? to : `${to}@s.whatsapp.net`);
    if (!target) throw new HTTPException(404, { message: 'unknown recipient' });
    const id = await core.phones.sendText(account, target.account, text);
    return c.json({ id });
  });

  /** The phone calls an account (`to`: its number or JID); its companion devices ring. */
  app.post('/phones/:phone/call', async (c) => {
    const account = accountOf(core, c.req.param('phone'));
    const { to, video } = await body(c, callSchema);
    const target = core.network.accounts.resolve(to.includes('@') ? to : `${to}@s.whatsapp.net`);
    if (!target) throw new HTTPException(404, { message: 'unknown recipient' });
    return c.json({ ok: true, callId: core.network.calls.place(account, target.account, video ?? false).callId });
  });
  /** The phone hangs up a call still ringing: unanswered, it ends as missed. */
  app.post('/phones/:phone/call/end', async (c) => {
    const account = accountOf(core, c.req.param('phone'));
    const { callId } = await body(c, endCallSchema);
    try {
      return c.json({ ok: true, call: core.network.calls.end(account, callId) });
    } catch (err) {
      if (err instanceof CallError) throw new HTTPException(err.status, { message: err.message });
      throw err;
    }
  });
  /** The calls the phone made or received, with how each ended (`rejectedBy`: the device that declined it). */
  app.get('/phones/:phone/calls', (c) => c.json({ calls: core.network.calls.of(accountOf(core, c.req.param('phone')).phone) }));

  /**
   * Gives the phone conversations to push as history to the companions it links next
   * (phone/history.ts `seedHistory`): `chats` × `messagesPerChat` messages over the last `days`
   * (default 365), the first `media` chats ending with an image.
   */
  app.post('/phones/:phone/history', async (c) => {
    const account = accountOf(core, c.req.param('phone'));
    const { days, media, ...size } = await body(c, historySeedSchema);
    const seeded = await seedHistory(account, { ...size, days: days ?? 365, media: media ?? 0 }, core.network.media);
    core.network.changed();
    return c.json({ ok: true, ...seeded });
  });
  /** The phone sends its RECENT or FULL history to its linked companions again (a repeated sync). */
  app.post('/phones/:phone/history/push', async (c) => {
    const account = accountOf(core, c.req.param('phone'));
    const { kind } = await body(c, historyPushSchema);
    await core.phones.pushHistory(account, kind);
    return c.json({ ok: true });
  });
  /**
   * The media host forgets the file of a message the phone keeps, as WhatsApp's CDN forgets old
   * media; `phoneKeeps` (default true): the phone can still upload it again when a companion asks.
   */
  app.post('/phones/:phone/media/expire', async (c) => {
    const account = accountOf(core, c.req.param('phone'));
    const { messageId, phoneKeeps } = await body(c, mediaExpireSchema);
    if (!(await expireKeptMedia(core.network, account, messageId, phoneKeeps ?? true))) {
      throw new HTTPException(404, { message: 'no media of that message on the media host' });
    }
    return c.json({ ok: true });
  });
  /** The conversations the phone keeps: per chat, its name, push name, unread count and message ids, oldest first. */
  app.get('/phones/:phone/history', (c) => {
    const chats = [...accountOf(core, c.req.param('phone')).phoneIdentity.chats.values()];
    return c.json({
      chats: chats.map(({ messages, ...chat }) => ({
        ...chat,
        messages: messages.map((m) => ({ id: m.id, fromMe: m.fromMe, timestamp: m.timestamp })),
      })),
    });
  });

  app.get('/phones/:phone/messages', async (c) => c.json({ messages: await core.phones.readInbox(accountOf(core, c.req.param('phone'))) }));

  /** The phone reads (or plays) messages it received: their senders get read / played receipts. */
  const markReceived = async (c: Context, phoneParam: string, type: PhoneReceiptType) => {
    const account = accountOf(core, phoneParam);
    const { messageIds, chatJid } = await body(c, phoneReceiptSchema);
    const found = findReceived(core.network, await core.phones.readInbox(account), messageIds, type, chatJid);
    if ('error' in found) throw new HTTPException(found.status, { message: found.error });
    return c.json({ ok: true, receipted: sendPhoneReceipts(core.network, account, found.entries, type) });
  };
  app.post('/phones/:phone/read', (c) => markReceived(c, c.req.param('phone'), 'read'));
  app.post('/phones/:phone/played', (c) => markReceived(c, c.req.param('phone'), 'played'));

  app.post('/kick', async (c) => {
    const { phone, device, kind } = await body(c, kickSchema);
    const account = accountOf(core, phone);
    if (device !== undefined && !account.devices.has(device)) throw new HTTPException(404, { message: 'unknown device' });
    const devices = device === undefined ? kickAllDevices(core.network, account, kind) : [kickDevice(core.network, account, device, kind)];
    return c.json({
      ok: true,
      kicked: devices.some((d) => d.kicked),
      unlinked: devices.some((d) => d.unlinked),
      devices,
    });
  });

  /**
   * WhatsApp refuses the account's next `count` sends with a nack carrying `error` (429
   * rate-overlimit, 463 reach-out time-lock); a refused message reaches nobody
   * (network/send-limits.ts). `delayMs`: the nack comes that late. `count: 0` clears it.
   */
  app.post('/limits', async (c) => {
    const { phone, error, count, delayMs } = await body(c, limitsSchema);
    accountOf(core, phone);
    core.network.sendLimits.refuse(phone, error, count, delayMs);
    return c.json({ ok: true, phone, pending: core.network.sendLimits.describe(phone) });
  });
  /** The account's next `count` sends are delivered but get no server ack (a send waits for it in vain). */
  app.post('/acks/withhold', async (c) => {
    const { phone, count } = await body(c, withholdSchema);
    accountOf(core, phone);
    core.network.sendLimits.withholdAcks(phone, count);
    return c.json({ ok: true, phone, pending: core.network.sendLimits.describe(phone) });
  });

  /** The client versions the network accepts: `minimum` (null: any), `current` (what `/sw.js` serves), what each device announced, refusals. */
  app.get('/version', (c) => c.json(core.clientVersions.describe()));
  app.put('/version', async (c) => {
    const { current, minimum } = await body(c, versionSchema);
    const versions = core.clientVersions;
    if (current) versions.current = parseWaVersion(current) ?? versions.current;
    if (minimum !== undefined) versions.minimum = minimum === null ? undefined : parseWaVersion(minimum);
    return c.json(versions.describe());
  });
  /** As WhatsApp Web serves its service worker: where a client reads the current revision. */
  app.get('/sw.js', (c) => c.body(core.clientVersions.swJs(), 200, { 'content-type': 'text/javascript; charset=utf-8' }));

  app.notFound((c) => c.json({ error: 'not found' }, 404));
  app.onError((err, c) => {
    if (err instanceof HTTPException) return c.json({ error: err.message }, err.status);
    core.network.logger.error({ err }, 'control API failure');
    return c.json({ error: 'internal error' }, 500);
  });
  return app;
}
