import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { ValidationError } from '../core/errors.js';
import { idempotencyHeaders, idempotentRequest, storedFileSha256 } from './idempotency.js';
import { accountOf } from './known-account.js';
import { readMediaSendFields } from './media-fields.js';
import { newRouter } from './router.js';
import { assertConnected, sendAndWait } from './send-wait.js';
import type { AppEnv, Services } from './services.js';
import { discardRefusedUpload, receiveUpload, sendUploadDestination } from './upload.js';
import { accountIdParam, errorBodySchema } from './validation.js';

/**
 * POST .../message/send/sticker: the media sends' upload (media-sends.ts: streamed, type judged
 * by the file's bytes, stored only when it may be sent), for a WebP, PNG, JPEG or GIF. The
 * connector makes the 512×512 WebP (connector/media/sticker.ts; sharp is not loaded here).
 */
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: errorBodySchema } } });

const sendSticker = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/message/send/sticker',
  summary: 'Send a sticker (multipart: WebP, PNG, JPEG or GIF, fitted into a 512×512 WebP; animated stays animated)',
  request: {
    params: z.object({ accountId: accountIdParam }),
    headers: idempotencyHeaders,
    body: {
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['sticker', 'to'],
            properties: { sticker: { type: 'string', format: 'binary' }, to: { type: 'string' } },
          },
        },
      },
    },
  },
  responses: {
    200: {
      description: 'Sent',
      content: { 'application/json': { schema: z.object({ ok: z.literal(true), messageId: z.string() }) } },
    },
    400: errorResponse('Malformed multipart body, missing field, bad JID or wrong file type'),
    404: errorResponse('Account not found'),
    409: errorResponse('Idempotency-Key reused with a different request'),
    413: errorResponse('File too large (max 50 MB)'),
    500: errorResponse('internal_error'),
  },
});

export function stickerSendRoutes(services: Services): OpenAPIHono<AppEnv> {
  return newRouter().openapi(sendSticker, async (c) => {
    const account = accountOf(c);
    const idempotencyKey = c.req.valid('header')['idempotency-key'];
    const destination = sendUploadDestination(services.media, account, idempotencyKey);
    // A sticker has no caption: its fields are a document's without one.
    const readFields = (fields: Record<string, string>) => readMediaSendFields('document', { ...(fields.to ? { to: fields.to } : {}) });
    const form = await receiveUpload(c.req.raw, {
      kind: 'sticker',
      fileField: 'sticker',
      maxBytes: services.config.MAX_UPLOAD_BYTES,
      ...(destination ? { destination } : {}),
      checkFieldsSoFar: (fields) => void readFields(fields),
    });
    try {
      const { to } = readFields(form.fields);
      const file = form.file;
      if (!file || !to) throw new ValidationError('sticker and to are required');
      if (idempotencyKey === undefined) assertConnected(account);
      const s3Key = file.s3Key;
      if (!s3Key) throw new Error('the upload of a connected account was not stored');
      const idempotency =
        idempotencyKey === undefined
          ? undefined
          : idempotentRequest(idempotencyKey, sendSticker.path, { to, file: await storedFileSha256(services.media, s3Key) });
      const messageId = await sendAndWait(
        services,
        account,
        { type: 'send_sticker', payload: { to, s3Key, mimetype: file.mimetype, size: file.size } },
        { signal: c.req.raw.signal, idempotency },
      );
      return c.json({ ok: true as const, messageId }, 200);
    } catch (error) {
      await discardRefusedUpload(services.media, form.file, error);
      throw error;
    }
  });
}
