import { Readable } from 'node:stream';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { NotFoundError, OperationFailedError } from '../../core/errors.js';
import { getStream } from '../../core/media-store.js';
import { messageSchema, type Message } from '../../core/schemas/message.js';
import { chatSchema } from '../../core/schemas/chat.js';
import { getAccount } from '../../core/store/accounts.js';
import { listChats } from '../../core/store/chats.js';
import { findMedia } from '../../core/store/media.js';
import { MEDIA_GONE } from '../../core/store/history-media.js';
import { findMessage, listMessages } from '../../core/store/messages.js';
import { newRouter } from '../http/router.js';
import { sendAndWait } from '../messages/send-wait.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse, jsonResponse } from '../http/responses.js';
import { accountIdParam, chatIdParam, messageIdParam, pageQuery } from '../http/validation.js';

const messageView = messageSchema;
const chatView = chatSchema;

const chats = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/chats',
  summary: 'Chats, most recent first',
  request: { params: z.object({ accountId: accountIdParam }), query: pageQuery },
  responses: {
    200: jsonResponse(z.object({ ok: z.literal(true), chats: z.array(chatView) }), 'Chats'),
    400: errorResponse('Bad paging'),
    404: errorResponse('Account not found'),
  },
});

const messages = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/chats/{chatId}/messages',
  summary: 'Messages of a chat, newest first',
  request: { params: z.object({ accountId: accountIdParam, chatId: chatIdParam }), query: pageQuery },
  responses: {
    200: jsonResponse(z.object({ ok: z.literal(true), messages: z.array(messageView) }), 'Messages'),
    400: errorResponse('Bad chat id or paging'),
    404: errorResponse('Account not found'),
  },
});

const message = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/messages/{messageId}',
  summary: 'One message',
  request: { params: z.object({ accountId: accountIdParam, messageId: messageIdParam }) },
  responses: {
    200: jsonResponse(z.object({ ok: z.literal(true), message: messageView }), 'The message'),
    404: errorResponse('Account not found / Message not found'),
  },
});

const media = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/messages/{messageId}/media',
  summary: 'Download stored media by mediaId (or by the id of a message that has media)',
  request: { params: z.object({ accountId: accountIdParam, messageId: messageIdParam }) },
  responses: {
    200: {
      description: 'The file, with its Content-Type and Content-Length',
      content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } },
    },
    404: errorResponse('Account not found / Message not found / No media in message / Media no longer available'),
    500: errorResponse('internal_error: the stored file could not be read'),
  },
});

/**
 * The media of an imported message, never downloaded yet: the connector fetches it from
 * WhatsApp now (connector/history/media-fetch.ts) and the row gets its mediaId.
 */
async function fetchHistoryMedia(services: Services, accountId: string, message: Message): Promise<string> {
  if (!message.hasMedia || !message.historical) throw new NotFoundError('No media in message');
  const account = await getAccount(services.table, accountId);
  try {
    await sendAndWait(services, account, { type: 'fetch_media', payload: { to: message.chatId, targetMessageId: message.messageId } });
  } catch (error) {
    if (error instanceof OperationFailedError && error.message === MEDIA_GONE) throw new NotFoundError(MEDIA_GONE);
    throw error;
  }
  const mediaId = (await findMessage(services.table, accountId, message.messageId))?.mediaId;
  if (!mediaId) throw new NotFoundError(MEDIA_GONE);
  return mediaId;
}

/** Header-safe file name for Content-Disposition. */
function dispositionName(fileName: string): string {
  return encodeURIComponent(fileName).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * Items live under their account, so a non-empty answer proves the account exists; only an
 * empty one costs the extra GetItem that tells "no such account" (404) from "nothing yet".
 */
async function assertAccountWhenEmpty(table: Services['table'], accountId: string, empty: boolean): Promise<void> {
  if (empty) await getAccount(table, accountId);
}

export function chatHistoryRoutes(services: Services): OpenAPIHono<AppEnv> {
  const { table } = services;
  return newRouter()
    .openapi(chats, async (c) => {
      const { accountId } = c.req.valid('param');
      const page = await listChats(table, accountId, c.req.valid('query'));
      await assertAccountWhenEmpty(table, accountId, page.length === 0);
      return c.json({ ok: true as const, chats: page }, 200);
    })
    .openapi(messages, async (c) => {
      const { accountId, chatId } = c.req.valid('param');
      const page = await listMessages(table, accountId, chatId, c.req.valid('query'));
      await assertAccountWhenEmpty(table, accountId, page.length === 0);
      return c.json({ ok: true as const, messages: page }, 200);
    })
    .openapi(message, async (c) => {
      const { accountId, messageId } = c.req.valid('param');
      const found = await findMessage(table, accountId, messageId);
      await assertAccountWhenEmpty(table, accountId, !found);
      if (!found) throw new NotFoundError('Message not found');
      return c.json({ ok: true as const, message: found }, 200);
    })
    .openapi(media, async (c) => {
      const { accountId, messageId: id } = c.req.valid('param');
      let record = await findMedia(table, accountId, id);
      if (!record) {
        const found = await findMessage(table, accountId, id);
        await assertAccountWhenEmpty(table, accountId, !found);
        if (!found) throw new NotFoundError('Message not found');
        const mediaId = found.mediaId ?? (await fetchHistoryMedia(services, accountId, found));
        record = await findMedia(table, accountId, mediaId);
        // Under MEDIA_RETENTION_DAYS a message may outlive its media: gone by design, not a fault.
        if (!record && table.retention?.mediaDays !== undefined) throw new NotFoundError('Media expired');
        if (!record) throw new OperationFailedError('media record missing for the message');
      }
      const object = await getStream(services.media, record.s3Key).catch((cause: unknown) => {
        throw new OperationFailedError('stored media could not be read', { cause });
      });
      if (!object) throw new OperationFailedError('stored media file is missing');
      const headers: Record<string, string> = { 'Content-Type': record.mimetype || object.contentType };
      const length = object.contentLength ?? record.size;
      if (length !== undefined) headers['Content-Length'] = String(length);
      if (record.fileName) headers['Content-Disposition'] = `inline; filename*=UTF-8''${dispositionName(record.fileName)}`;
      const body = Readable.toWeb(object.body) as ReadableStream<Uint8Array>;
      return c.body(body, 200, headers);
    });
}
