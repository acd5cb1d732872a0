import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { MediaKind } from '../../core/schemas/command.js';
import { idempotentRequest, storedFileSha256 } from './idempotency.js';
import { accountOf } from '../http/known-account.js';
import { readMediaSendFields, requireMediaSendFields } from './media-fields.js';
import { newRouter } from '../http/router.js';
import { multipartSendRequest, sentResponse, uploadSendErrors } from './route-parts.js';
import { assertCanSend, sendAndWait } from './send-wait.js';
import { sendOptionsOf } from './async-sends.js';
import type { AppEnv, Services } from '../http/services.js';
import { discardRefusedUpload, receiveUpload, sendUploadDestination } from './upload.js';

const KINDS: MediaKind[] = ['image', 'video', 'audio', 'document'];

function routeFor(kind: MediaKind) {
  const properties: Parameters<typeof multipartSendRequest>[1] = {
    [kind]: { type: 'string', format: 'binary' },
    to: { type: 'string' },
  };
  if (kind === 'audio') properties.ptt = { type: 'string', enum: ['true', 'false', '1', '0'] };
  else properties.caption = { type: 'string' };
  return createRoute({
    method: 'post',
    path: `/accounts/{accountId}/message/send/${kind}`,
    summary: `Send ${kind === 'audio' || kind === 'image' ? 'an' : 'a'} ${kind} (multipart, at most 50 MB)`,
    request: multipartSendRequest([kind, 'to'], properties),
    responses: { 200: sentResponse, ...uploadSendErrors('Malformed multipart body, missing field, bad JID, bad ptt or wrong file type') },
  });
}

export function mediaSendRoutes(services: Services): OpenAPIHono<AppEnv> {
  const router = newRouter();
  for (const kind of KINDS) {
    const route = routeFor(kind);
    // Order of judgement: unknown account 404 (knownAccount, before the body), then the request
    // itself, 400/413 (headers, then the body as it streams), then the account's state, 500.
    router.openapi(route, async (c) => {
      const account = accountOf(c);
      const idempotencyKey = c.req.valid('header')['idempotency-key'];
      const destination = sendUploadDestination(services.media, account, idempotencyKey);
      const form = await receiveUpload(c.req.raw, {
        kind,
        fileField: kind,
        maxBytes: services.config.MAX_UPLOAD_BYTES,
        ...(destination ? { destination } : {}),
        checkFieldsSoFar: (fields) => void readMediaSendFields(kind, fields),
      });
      try {
        const { to, caption, ptt, file } = requireMediaSendFields(kind, form.fields, form.file);
        // With a key, sendAndWait answers a replay before it checks the connection.
        if (idempotencyKey === undefined) assertCanSend(services, account, sendOptionsOf(c, undefined));
        const s3Key = file.s3Key;
        if (!s3Key) throw new Error('the upload of a connected account was not stored');
        const fileName = file.fileName ?? (kind === 'document' ? caption : undefined);
        const idempotency =
          idempotencyKey === undefined
            ? undefined
            : idempotentRequest(idempotencyKey, route.path, {
                to,
                caption,
                ptt,
                fileName,
                file: await storedFileSha256(services.media, s3Key),
              });
        const messageId = await sendAndWait(
          services,
          account,
          {
            type: 'send_media',
            payload: {
              to,
              kind,
              s3Key,
              mimetype: file.mimetype,
              size: file.size,
              ...(fileName ? { fileName } : {}),
              ...(caption ? { caption } : {}),
              ...(ptt !== undefined ? { ptt } : {}),
            },
          },
          sendOptionsOf(c, idempotency),
        );
        return c.json({ ok: true as const, messageId }, 200);
      } catch (error) {
        await discardRefusedUpload(services.media, form.file, error);
        throw error;
      }
    });
  }
  return router;
}
