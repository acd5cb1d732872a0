import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { ValidationError } from '../../core/errors.js';
import { accountOf } from '../http/known-account.js';
import { ALREADY_CONNECTED, requestPairingCode } from './pairing-code-wait.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse, jsonContent, jsonResponse } from '../http/responses.js';
import { accountIdParam } from '../http/validation.js';

const PHONE_NUMBER_ERROR = 'phoneNumber must be digits with country code';

/** A leading `+`, spaces and dashes are how people write numbers; what is left must be digits. */
function normalizePhoneNumber(value: string): string | undefined {
  const digits = value.trim().replace(/^\+/, '').replace(/[\s-]/g, '');
  return /^\d{1,20}$/.test(digits) ? digits : undefined;
}

const params = z.object({ accountId: accountIdParam });
const body = z.object({
  phoneNumber: z
    .string({ error: PHONE_NUMBER_ERROR })
    .transform((value, ctx) => {
      const digits = normalizePhoneNumber(value);
      if (digits === undefined) {
        ctx.addIssue({ code: 'custom', message: PHONE_NUMBER_ERROR });
        return z.NEVER;
      }
      return digits;
    })
    .openapi({ type: 'string', example: '+1 555-123-4567', description: 'Country code and number of the phone that will link' }),
});

const pairingCode = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/pairing-code',
  summary: 'Get a code to link the account by phone number instead of scanning the QR',
  description:
    'The 8-character code is entered on the phone in WhatsApp > Linked devices > Link with phone number, before `expiresAt`. It is logged too.',
  request: { params, body: { required: true, content: jsonContent(body) } },
  responses: {
    200: jsonResponse(
      z.object({
        ok: z.literal(true),
        code: z.string().openapi({ example: 'ABCD1234' }),
        expiresAt: z.number().int().openapi({ description: 'Unix ms' }),
      }),
      'The code to enter on the phone',
    ),
    400: errorResponse('Bad phoneNumber, or the account is already connected'),
    404: errorResponse('Account not found'),
    500: errorResponse('internal_error: the connector gave no code in time'),
  },
});

/** The account is knownAccount's (accounts/routes.ts): an unknown one is 404 before its body is judged. */
export function pairingRoutes(services: Services): OpenAPIHono<AppEnv> {
  return newRouter().openapi(pairingCode, async (c) => {
    const { phoneNumber } = c.req.valid('json');
    const account = accountOf(c);
    if (account.currentStatus === 'connected') throw new ValidationError(ALREADY_CONNECTED);
    const { code, expiresAt } = await requestPairingCode(services, account._id, phoneNumber);
    return c.json({ ok: true as const, code, expiresAt }, 200);
  });
}
