import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { ConflictError, ValidationError } from '../core/errors.js';
import { newUploadId } from '../core/ids.js';
import { assertJid } from '../core/jid.js';
import { deleteObject } from '../core/media-store.js';
import { uploadObjectKey } from '../core/keys.js';
import type { MediaKind } from '../core/schemas/command.js';
import { getAccount } from '../core/store/accounts.js';
import { idempotencyHeaders, idempotentRequest, storedFileSha256 } from './idempotency.js';
import { newRouter } from './router.js';
import { assertConnected, sendAndWait } from './send-wait.js';
import type { AppEnv, Services } from './services.js';
import { receiveUpload, tooLarge } from './upload.js';
import { accountIdParam, errorBodySchema } from './validation.js';

const MAX_CAPTION_LENGTH = 1024;
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
  if (kind === 'audio') properties.ptt = { type: 'string', enum: ['true', 'false'] };
  else properties.caption = { type: 'string' };
  return createRoute({
    method: 'post',
    path: `/accounts/{accountId}/message/send/${kind}`,
    summary: `Send ${kind === 'audio' ? 'an' : 'a'} ${kind} (multipart, at most 50 MB)`,
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
      400: errorResponse('Missing field, bad JID or wrong file type'),
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
    router.openapi(route, async (c) => {
      const required = `${kind} and to are required`;
      const { accountId } = c.req.valid('param');
      const idempotencyKey = c.req.valid('header')['idempotency-key'];
      const max = services.config.MAX_UPLOAD_BYTES;
      // Refuse before reading a byte when the size or the account already rules the send out.
      if (Number(c.req.header('content-length') ?? 0) > max + 64 * 1024) throw tooLarge(max);
      const account = await getAccount(services.table, accountId);
      // A retry under an Idempotency-Key answers like its first request, even once disconnected.
      if (idempotencyKey === undefined) assertConnected(account);

      const s3Key = uploadObjectKey(account._id, newUploadId());
      const form = await receiveUpload(c.req.raw, { kind, fileField: kind, s3Key, maxBytes: max, media: services.media });
      try {
        if (!form.file || !form.fields.to?.trim()) throw new ValidationError(required);
        const to = assertJid(form.fields.to, 'to');
        const caption = kind === 'audio' ? undefined : form.fields.caption?.trim() || undefined;
        if (caption && caption.length > MAX_CAPTION_LENGTH) {
          throw new ValidationError(`caption must be at most ${MAX_CAPTION_LENGTH} characters`);
        }
        // Absent: the connector's default (a voice note); `ptt=false` sends a plain audio file.
        const ptt = kind === 'audio' && form.fields.ptt !== undefined ? form.fields.ptt !== 'false' : undefined;
        const file = form.file;
        const fileName = file.fileName ?? (kind === 'document' ? caption : undefined);
        const idempotency =
          idempotencyKey === undefined
            ? undefined
            : idempotentRequest(idempotencyKey, route.path, {
                to,
                caption,
                ptt,
                fileName,
                file: await storedFileSha256(services.media, file.s3Key),
              });
        const messageId = await sendAndWait(
          services,
          account,
          (ids) => ({
            type: 'send_media',
            accountId: account._id,
            commandId: ids.commandId,
            payload: {
              messageId: ids.messageId,
              to,
              kind,
              s3Key: file.s3Key,
              mimetype: file.mimetype,
              size: file.size,
              ...(fileName ? { fileName } : {}),
              ...(caption ? { caption } : {}),
              ...(ptt !== undefined ? { ptt } : {}),
            },
          }),
          { signal: c.req.raw.signal, idempotency },
        );
        return c.json({ ok: true as const, messageId }, 200);
      } catch (error) {
        if ((error instanceof ValidationError || error instanceof ConflictError) && form.file) await deleteObject(services.media, form.file.s3Key);
        throw error;
      }
    });
  }
  return router;
}
