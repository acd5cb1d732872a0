import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { NotFoundError } from '../../core/errors.js';
import { qrPng, qrSvg } from '../../core/qr-image.js';
import { getAccount } from '../../core/store/accounts.js';
import { findQr } from '../../core/store/qr.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse } from '../http/responses.js';
import { accountIdParam } from '../http/validation.js';

const EXAMPLE_QR = '2@Xk3kZ0bW9ja1FSdGV4dA==,dGhlIHB1YmxpYyBub2lzZSBrZXk=,aWRlbnRpdHkga2V5,YWR2IHNlY3JldA==';

const formatQuery = z.object({
  format: z
    .enum(['json', 'png', 'svg'], { error: 'format must be json, png or svg' })
    .optional()
    .openapi({ param: { name: 'format', in: 'query' }, description: 'Wins over `Accept`', example: 'png' }),
});

const qr = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/qr',
  summary: 'The QR code to scan with WhatsApp > Linked devices, while the account waits for one',
  description:
    'JSON by default; a PNG with `Accept: image/png` or `?format=png`; an SVG with `?format=svg`. ' +
    'A QR lives 60 s (the first of a connection) or 20 s (each later one): fetch again for the next.',
  request: { params: z.object({ accountId: accountIdParam }), query: formatQuery },
  responses: {
    200: {
      description: 'The current QR',
      content: {
        'application/json': {
          schema: z
            .object({
              ok: z.literal(true),
              qr: z.string().openapi({ description: 'The raw QR text, as in the log', example: EXAMPLE_QR }),
              expiresAt: z.number().int().openapi({ description: 'Unix ms', example: 1767261660000 }),
            })
            .openapi('PendingQr'),
        },
        'image/png': { schema: z.string().openapi({ format: 'binary' }) },
        'image/svg+xml': { schema: z.string().openapi({ example: '<svg xmlns="http://www.w3.org/2000/svg" …</svg>' }) },
      },
    },
    400: errorResponse('Unknown format'),
    404: errorResponse('Account not found, or No QR code available (connected, not started, logged out, first QR not there yet)'),
  },
});

function wantedFormat(format: 'json' | 'png' | 'svg' | undefined, accept: string | undefined): 'json' | 'png' | 'svg' {
  if (format) return format;
  return accept && /(^|,)\s*image\/png\b/i.test(accept) ? 'png' : 'json';
}

export function qrRoutes(services: Services): OpenAPIHono<AppEnv> {
  const { table } = services;
  return newRouter().openapi(qr, async (c) => {
    const accountId = c.req.valid('param').accountId;
    const [account, pending] = await Promise.all([getAccount(table, accountId), findQr(table, accountId)]);
    // A QR outliving its session (a connector stopped without clearing it) is not shown.
    if (!pending || account.currentStatus !== 'connecting') throw new NotFoundError('No QR code available');
    const headers = { 'Cache-Control': 'no-store' };
    switch (wantedFormat(c.req.valid('query').format, c.req.header('accept'))) {
      case 'png':
        return c.body(new Uint8Array(qrPng(pending.qr)), 200, { ...headers, 'Content-Type': 'image/png' });
      case 'svg':
        return c.body(qrSvg(pending.qr), 200, { ...headers, 'Content-Type': 'image/svg+xml' });
      case 'json':
        return c.json({ ok: true as const, qr: pending.qr, expiresAt: pending.expiresAt }, 200, headers);
    }
  });
}
