import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { ValidationError } from '../../core/errors.js';
import { idempotentRequest, storedFileSha256 } from './idempotency.js';
import { accountOf } from '../http/known-account.js';
import { readMediaSendFields } from './media-fields.js';
import { newRouter } from '../http/router.js';
import { multipartSendRequest, sentResponse, uploadSendErrors } from './route-parts.js';
import { assertCanSend, sendAndWait } from './send-wait.js';
import { sendOptionsOf } from './async-sends.js';
import type { AppEnv, Services } from '../http/services.js';
import { discardRefusedUpload, receiveUpload, sendUploadDestination } from './upload.js';

/**
 * POST .../message/send/sticker: the media sends' upload (media-sends.ts: streamed, type judged
 * by the file's bytes, stored only when it may be sent), for a WebP, PNG, JPEG or GIF. The
 * connector makes the 512×512 WebP (connector/media/sticker.ts; sharp is not loaded here).
 */

const sendSticker = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/message/send/sticker',
  summary: 'Send a sticker (multipart: WebP, PNG, JPEG or GIF, fitted into a 512×512 WebP; animated stays animated)',
  request: multipartSendRequest(['sticker', 'to'], { sticker: { type: 'string', format: 'binary' }, to: { type: 'string' } }),
  responses: { 200: sentResponse, ...uploadSendErrors('Malformed multipart body, missing field, bad JID or wrong file type') },
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
      if (idempotencyKey === undefined) assertCanSend(services, account, sendOptionsOf(c, undefined));
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
        sendOptionsOf(c, idempotency),
      );
      return c.json({ ok: true as const, messageId }, 200);
    } catch (error) {
      await discardRefusedUpload(services.media, form.file, error);
      throw error;
    }
  });
}
