import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createInflate, inflate } from 'node:zlib';
import { downloadContentFromMessage, proto, type WASocket } from '@whiskeysockets/baileys';
import type { FetchDispatcher } from '../network/network-options.js';

const inflateAsync = promisify(inflate);

/**
 * The history a notification announces, decoded: inline (small syncs), or downloaded from the
 * media host and decrypted as media of type 'md-msg-hist', then inflated. This is Baileys'
 * `downloadHistory` (Utils/history.js) with the media host WhatsApp announces in media_conn:
 * a notification names its blob by `directPath` only, and Baileys' own download then always goes
 * to mmg.whatsapp.net.
 */
export async function fetchHistorySync(
  sock: WASocket,
  notification: proto.Message.IHistorySyncNotification,
  dispatcher: FetchDispatcher | undefined,
): Promise<proto.HistorySync> {
  if (notification.initialHistBootstrapInlinePayload?.length) {
    return proto.HistorySync.decode(await inflateAsync(notification.initialHistBootstrapInlinePayload));
  }
  const { hosts } = await sock.refreshMediaConn(false);
  const host = hosts[0]?.hostname;
  const stream = await downloadContentFromMessage(
    { mediaKey: notification.mediaKey, directPath: notification.directPath, url: undefined },
    'md-msg-hist',
    { ...(host ? { host } : {}), ...(dispatcher ? { options: { dispatcher } } : {}) },
  );
  const chunks: Buffer[] = [];
  const inflater = createInflate();
  inflater.on('data', (chunk: Buffer) => chunks.push(chunk));
  await pipeline(stream, inflater);
  return proto.HistorySync.decode(Buffer.concat(chunks));
}
