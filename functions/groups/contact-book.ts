import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { NotFoundError } from '../../core/errors.js';
import { contactSchema, shownName, type Contact } from '../../core/schemas/contact.js';
import { jidSchema } from '../../core/schemas/jid.js';
import { getAccount } from '../../core/store/accounts.js';
import { findContact, listContacts } from '../../core/store/contacts.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse, jsonResponse } from '../http/responses.js';
import { MAX_SKIP, accountIdParam, pageNumber } from '../http/validation.js';

const MAX_QUERY_LENGTH = 100;

const contactView = contactSchema.clone().openapi('Contact', {
  example: { jid: '15551234567@s.whatsapp.net', phone: '15551234567', name: 'Dan Smith', pushName: 'Dan' },
});

const listQuery = z.object({
  limit: pageNumber('limit', 1, 500, 50),
  skip: pageNumber('skip', 0, MAX_SKIP, 0),
  q: z
    .string()
    .max(MAX_QUERY_LENGTH, { error: `q must be at most ${MAX_QUERY_LENGTH} characters` })
    .optional()
    .openapi({ param: { name: 'q', in: 'query' }, example: 'dan' }),
});

const list = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/contacts',
  summary: 'Contacts, sorted by the name shown (saved name, else push name, else number)',
  request: { params: z.object({ accountId: accountIdParam }), query: listQuery },
  responses: {
    200: jsonResponse(z.object({ ok: z.literal(true), contacts: z.array(contactView) }), 'Contacts'),
    400: errorResponse('Bad paging or q'),
    404: errorResponse('Account not found'),
  },
});

const one = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/contacts/{jid}',
  summary: 'One contact',
  request: {
    params: z.object({
      accountId: accountIdParam,
      jid: jidSchema('jid').openapi({ param: { name: 'jid', in: 'path' }, type: 'string', example: '15551234567@s.whatsapp.net' }),
    }),
  },
  responses: {
    200: jsonResponse(z.object({ ok: z.literal(true), contact: contactView }), 'The contact'),
    400: errorResponse('Invalid JID'),
    404: errorResponse('Account not found / Contact not found'),
  },
});

/** Sorted as the list answers: by the name shown, case and accents aside, then by JID. */
const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });
const byShownName = (a: Contact, b: Contact) => collator.compare(shownName(a), shownName(b)) || (a.jid < b.jid ? -1 : 1);

/** Whether `q` (lower case) is part of the contact's saved name, push name or number. */
function matches(contact: Contact, q: string): boolean {
  return [contact.name, contact.pushName, contact.phone].some((field) => field?.toLowerCase().includes(q));
}

/**
 * The account's contacts as its sessions learnt them (connector/session/contact-book.ts): the
 * address book's names, push names, numbers and LIDs. The list reads every contact of the account
 * (one Query) and sorts and filters them here: a name-sorted index would cost a write on every
 * rename for a list read far less often than names change.
 */
export function contactBookRoutes(services: Services): OpenAPIHono<AppEnv> {
  const { table } = services;
  return newRouter()
    .openapi(list, async (c) => {
      const { accountId } = c.req.valid('param');
      const { limit, skip, q } = c.req.valid('query');
      const all = await listContacts(table, accountId);
      if (all.length === 0) await getAccount(table, accountId);
      const wanted = q?.trim().toLowerCase();
      const shown = (wanted ? all.filter((contact) => matches(contact, wanted)) : all).sort(byShownName);
      return c.json({ ok: true as const, contacts: shown.slice(skip, skip + limit) }, 200);
    })
    .openapi(one, async (c) => {
      const { accountId, jid } = c.req.valid('param');
      const contact = await findContact(table, accountId, jid);
      if (!contact) {
        await getAccount(table, accountId);
        throw new NotFoundError('Contact not found');
      }
      return c.json({ ok: true as const, contact }, 200);
    });
}
