import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { MediaKind } from '../core/schemas/command.js';
import { idempotencyHeaders, idempotentRequest, storedFileSha256 } from './idempotency.js';
import { accountOf } from './known-account.js';
import { readMediaSendFields, requireMediaSendFields } from './media-fields.js';
import { newRouter } from './router.js';
import { assertConnected, sendAndWait } from './send-wait.js';
import type { AppEnv, Services } from './services.js';
import { discardRefusedUpload, receiveUpload, sendUploadDestination } from './upload.js';
import { accountIdParam, errorBodySchema } from './validation.js';

const KINDS: MediaKind[] = ['image', 'video', 'audio', 'document'];

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: errorBodySchema } },
});

function routeFor(kind: MediaKind) {
  const properties: Record<string, { type: 'string'; format?: string; enum?: string[] }> = {
    [kind]: { type: 'string', format: 'binary' },
    to: { type: 'string' },
  };
  if (kind === 'audio') properties.ptt = { type: 'string', enum: ['true', 'false', '1', '0'] };
  else properties.caption = { type: 'string' };
  return createRoute({
    method: 'post',
    path: `/accounts/{accountId}/message/send/${kind}`,
    summary: `Send ${kind === 'audio' || kind === 'image' ? 'an' : 'a'} ${kind} (multipart, at most 50 MB)`,
    request: {
      params: z.object({ accountId: accountIdParam }),
      headers: idempotencyHeaders,
      // A plain OpenAPI schema, not zod: a zod form schema would make the validator buffer the
      // whole body. receiveUpload streams it instead.
      body: {
        content: { 'multipart/form-data': { schema: { type: 'object', required: [kind, 'to'], properties } } },
      },
    },
    responses: {
      200: {
        description: 'Sent',
        content: { 'application/json': { schema: z.object({ ok: z.literal(true), messageId: z.string() }) } },
      },
      400: errorResponse('Malformed multipart body, missing field, bad JID, bad ptt or wrong file type'),
      404: errorResponse('Account not found'),
      409: errorResponse('Idempotency-Key reused with a different request'),
      413: errorResponse('File too large (max 50 MB)'),
      500: errorResponse('internal_error'),
    },
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
        if (idempotencyKey === undefined) assertConnected(account);
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
          { signal: c.req.raw.signal, idempotency },
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
