import { z } from '@hono/zod-openapi';
import { ACCOUNT_ID_PATTERN, MESSAGE_ID_PATTERN } from '../../core/jid.js';
import { jidSchema } from '../../core/schemas/jid.js';

/**
 * Schemas shared by the routes. Error messages are the client-facing strings (the app's
 * defaultHook answers with the first one), so they follow docs/api.md exactly.
 */
const MAX_PAGE_SIZE = 100;
const DEFAULT_PAGE_SIZE = 50;
/** DynamoDB has no offset: skipped items are read and dropped, so skip is bounded. */
export const MAX_SKIP = 10_000;

/** The HTTP status an issue asks for, carried in its `params` (the defaultHook reads it). */
export interface IssueParams {
  status: 404;
}

/** An id that cannot exist names no resource: its issue answers 404 with `message`, not 400. */
const resourceId = (pattern: RegExp, message: string) =>
  z
    .string()
    .refine((value) => pattern.test(value), { error: message, params: { status: 404 } satisfies IssueParams })
    .openapi({ pattern: pattern.source });

export const accountIdParam = resourceId(ACCOUNT_ID_PATTERN, 'Account not found').openapi({
  param: { name: 'accountId', in: 'path' },
  example: 'sales1',
});

export const messageIdParam = resourceId(MESSAGE_ID_PATTERN, 'Message not found').openapi({
  param: { name: 'messageId', in: 'path' },
  example: '3EB0C0FFEE',
});

export const chatIdParam = jidSchema('chatId').openapi({
  param: { name: 'chatId', in: 'path' },
  example: '15551234567@s.whatsapp.net',
  type: 'string',
});

export const pageNumber = (name: string, min: number, max: number, fallback: number) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return fallback;
      const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `${name} must be an integer from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    })
    .openapi({ param: { name, in: 'query' }, type: 'integer' });

export const pageQuery = z.object({
  limit: pageNumber('limit', 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE),
  skip: pageNumber('skip', 0, MAX_SKIP, 0),
});

/**
 * A required, non-empty string field whose absence yields `message` (docs/api.md groups missing
 * fields into one message, e.g. `to and message are required`).
 */
export const requiredString = (message: string) =>
  z.string({ error: message }).refine((value) => value.trim().length > 0, { error: message });
