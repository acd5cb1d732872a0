import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { whyNotEditable } from '../../core/edit-window.js';
import { MESSAGE_ID_PATTERN } from '../../core/jid.js';
import { jidSchema } from '../../core/schemas/jid.js';
import { findMessage } from '../../core/store/messages.js';
import { idempotentRequest } from './idempotency.js';
import { accountOf } from '../http/known-account.js';
import { messageResponse } from '../http/responses.js';
import { newRouter } from '../http/router.js';
import { jsonSendRequest, sendErrors, sentResponse } from './route-parts.js';
import { sendAndWait, type SendRequest } from './send-wait.js';
import { sendOptionsOf } from './async-sends.js';
import type { Context } from 'hono';
import type { AppEnv, Services } from '../http/services.js';
import { requiredString } from '../http/validation.js';

/**
 * Sends of the kinds beyond text and media (location, contact, poll), and edit and forward of a
 * stored message. Each body is checked in two steps, as in sends.ts: the required fields,
 * then their form; both before the account's state. The connector builds the content (vCards
 * included), so nothing heavy is imported here.
 */

const MAX_TEXT_LENGTH = 4096;
/** WhatsApp's limits on a poll. */
const MIN_POLL_OPTIONS = 2;
const MAX_POLL_OPTIONS = 12;
const MAX_CONTACTS = 10;

const messageIdField = (field: string) =>
  z.string().regex(MESSAGE_ID_PATTERN, { error: `${field} must be a message id (letters and digits)` });

const coordinate = (field: string, limit: number) =>
  z
    .number({ error: `${field} must be a number from -${limit} to ${limit}` })
    .min(-limit, { error: `${field} must be a number from -${limit} to ${limit}` })
    .max(limit, { error: `${field} must be a number from -${limit} to ${limit}` });

const optionalText = (field: string, max: number) =>
  z
    .string({ error: `${field} must be a string` })
    .max(max, { error: `${field} must be at most ${max} characters` })
    .optional();

const LOCATION_REQUIRED = 'to, latitude and longitude are required';
const locationBody = z
  .object({
    to: requiredString(LOCATION_REQUIRED),
    latitude: z.unknown().refine((value) => value !== undefined && value !== null, { error: LOCATION_REQUIRED }),
    longitude: z.unknown().refine((value) => value !== undefined && value !== null, { error: LOCATION_REQUIRED }),
  })
  .passthrough()
  .pipe(
    z.object({
      to: jidSchema('to'),
      latitude: coordinate('latitude', 90),
      longitude: coordinate('longitude', 180),
      name: optionalText('name', 256),
      address: optionalText('address', 256),
    }),
  )
  .openapi({ example: { to: '15551234567@s.whatsapp.net', latitude: 52.52, longitude: 13.405, name: 'Brandenburger Tor' } });

const CONTACT_REQUIRED = 'to and contacts are required';
const PHONE_ERROR = 'contacts[].phone must be digits with country code';
const contactCard = z.object(
  {
    name: z
      .string({ error: 'contacts[].name is required' })
      .trim()
      .min(1, { error: 'contacts[].name is required' })
      .max(256, { error: 'contacts[].name must be at most 256 characters' }),
    phone: z
      .string({ error: PHONE_ERROR })
      .transform((value) =>
        value
          .trim()
          .replace(/^\+/, '')
          .replace(/[\s().-]/g, ''),
      )
      .refine((digits) => /^\d{6,20}$/.test(digits), { error: PHONE_ERROR }),
  },
  { error: 'each contact must be an object with name and phone' },
);
const contactBody = z
  .object({
    to: requiredString(CONTACT_REQUIRED),
    contacts: z.unknown().refine((value) => value !== undefined, { error: CONTACT_REQUIRED }),
  })
  .passthrough()
  .pipe(
    z.object({
      to: jidSchema('to'),
      contacts: z
        .array(contactCard, { error: `contacts must be an array of 1 to ${MAX_CONTACTS} contacts` })
        .min(1, { error: `contacts must be an array of 1 to ${MAX_CONTACTS} contacts` })
        .max(MAX_CONTACTS, { error: `contacts must be an array of 1 to ${MAX_CONTACTS} contacts` }),
    }),
  )
  .openapi({ example: { to: '15551234567@s.whatsapp.net', contacts: [{ name: 'Ada Lovelace', phone: '+44 20 7946 0000' }] } });

const POLL_REQUIRED = 'to, name and options are required';
const OPTIONS_ERROR = `options must be ${MIN_POLL_OPTIONS} to ${MAX_POLL_OPTIONS} different, non-empty strings`;
const pollBody = z
  .object({
    to: requiredString(POLL_REQUIRED),
    name: requiredString(POLL_REQUIRED),
    options: z.unknown().refine((value) => value !== undefined, { error: POLL_REQUIRED }),
  })
  .passthrough()
  .pipe(
    z
      .object({
        to: jidSchema('to'),
        name: z.string().max(256, { error: 'name must be at most 256 characters' }),
        options: z
          .array(
            z
              .string({ error: OPTIONS_ERROR })
              .trim()
              .min(1, { error: OPTIONS_ERROR })
              .max(100, { error: 'each option must be at most 100 characters' }),
            {
              error: OPTIONS_ERROR,
            },
          )
          .min(MIN_POLL_OPTIONS, { error: OPTIONS_ERROR })
          .max(MAX_POLL_OPTIONS, { error: OPTIONS_ERROR })
          .refine((options) => new Set(options).size === options.length, { error: OPTIONS_ERROR }),
        selectableCount: z
          .number({ error: 'selectableCount must be an integer from 0 (any number) to the number of options' })
          .int({ error: 'selectableCount must be an integer from 0 (any number) to the number of options' })
          .min(0, { error: 'selectableCount must be an integer from 0 (any number) to the number of options' })
          .optional(),
      })
      .refine((body) => body.selectableCount === undefined || body.selectableCount <= body.options.length, {
        error: 'selectableCount must be an integer from 0 (any number) to the number of options',
      }),
  )
  .openapi({ example: { to: '15551234567@s.whatsapp.net', name: 'Lunch?', options: ['Pizza', 'Sushi'], selectableCount: 1 } });

const EDIT_REQUIRED = 'to, messageId and message are required';
const editBody = z
  .object({
    to: requiredString(EDIT_REQUIRED),
    messageId: requiredString(EDIT_REQUIRED),
    message: requiredString(EDIT_REQUIRED),
  })
  .pipe(
    z.object({
      to: jidSchema('to'),
      messageId: messageIdField('messageId'),
      message: z.string().max(MAX_TEXT_LENGTH, { error: `message must be at most ${MAX_TEXT_LENGTH} characters` }),
    }),
  );

const FORWARD_REQUIRED = 'to and messageId are required';
const forwardBody = z
  .object({ to: requiredString(FORWARD_REQUIRED), messageId: requiredString(FORWARD_REQUIRED) })
  .pipe(z.object({ to: jidSchema('to'), messageId: messageIdField('messageId') }));

const errors = sendErrors('Account (or, for edit and forward, message) not found');
const jsonBody = jsonSendRequest;

const sendLocation = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/message/send/location',
  summary: 'Send a location',
  request: jsonBody(locationBody),
  responses: { 200: sentResponse, ...errors },
});
const sendContact = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/message/send/contact',
  summary: 'Send contact cards (vCards built from name and phone)',
  request: jsonBody(contactBody),
  responses: { 200: sentResponse, ...errors },
});
const sendPoll = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/message/send/poll',
  summary: 'Send a poll (2 to 12 options; votes arrive as message.poll_vote events)',
  request: jsonBody(pollBody),
  responses: { 200: sentResponse, ...errors },
});
const edit = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/message/edit',
  summary: 'Edit a text message this account sent (within 15 minutes of sending)',
  request: jsonBody(editBody),
  responses: {
    200: messageResponse('Edited'),
    ...errors,
  },
});
const forward = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/message/forward',
  summary: 'Forward a stored message (its media included) to another chat',
  request: jsonBody(forwardBody),
  responses: { 200: sentResponse, ...errors },
});

type Fingerprinted = Record<string, string | boolean | undefined>;

export function messageKindRoutes(services: Services): OpenAPIHono<AppEnv> {
  const { table } = services;

  /** A send with the route's Idempotency-Key; `fields` identify the request. */
  const send = (
    c: Context<AppEnv>,
    key: string | undefined,
    path: string,
    fields: Fingerprinted,
    account: ReturnType<typeof accountOf>,
    request: SendRequest,
  ) => sendAndWait(services, account, request, sendOptionsOf(c, idempotentRequest(key, path, fields)));

  return newRouter()
    .openapi(sendLocation, async (c) => {
      const { to, latitude, longitude, name, address } = c.req.valid('json');
      const payload = { to, latitude, longitude, ...(name ? { name } : {}), ...(address ? { address } : {}) };
      const fields = { to, latitude: String(latitude), longitude: String(longitude), name, address };
      const key = c.req.valid('header')['idempotency-key'];
      const messageId = await send(c, key, sendLocation.path, fields, accountOf(c), { type: 'send_location', payload });
      return c.json({ ok: true as const, messageId }, 200);
    })
    .openapi(sendContact, async (c) => {
      const { to, contacts } = c.req.valid('json');
      const key = c.req.valid('header')['idempotency-key'];
      const fields = { to, contacts: JSON.stringify(contacts) };
      const messageId = await send(c, key, sendContact.path, fields, accountOf(c), {
        type: 'send_contact',
        payload: { to, contacts },
      });
      return c.json({ ok: true as const, messageId }, 200);
    })
    .openapi(sendPoll, async (c) => {
      const { to, name, options, selectableCount = 1 } = c.req.valid('json');
      const key = c.req.valid('header')['idempotency-key'];
      const fields = { to, name, options: JSON.stringify(options), selectableCount: String(selectableCount) };
      const messageId = await send(c, key, sendPoll.path, fields, accountOf(c), {
        type: 'send_poll',
        payload: { to, name, options, selectableCount },
      });
      return c.json({ ok: true as const, messageId }, 200);
    })
    .openapi(edit, async (c) => {
      const { to, messageId: targetMessageId, message } = c.req.valid('json');
      const account = accountOf(c);
      const target = await findMessage(table, account._id, targetMessageId);
      if (!target) throw new NotFoundError('Message not found');
      const why = whyNotEditable(target);
      if (why) throw new ValidationError(why);
      const key = c.req.valid('header')['idempotency-key'];
      await send(c, key, edit.path, { to, targetMessageId, text: message }, account, {
        type: 'edit_message',
        payload: { to, targetMessageId, text: message },
      });
      return c.json({ ok: true as const, message: 'Message edited' }, 200);
    })
    .openapi(forward, async (c) => {
      const { to, messageId: sourceMessageId } = c.req.valid('json');
      const account = accountOf(c);
      if (!(await findMessage(table, account._id, sourceMessageId))) throw new NotFoundError('Message not found');
      const key = c.req.valid('header')['idempotency-key'];
      const messageId = await send(c, key, forward.path, { to, sourceMessageId }, account, {
        type: 'forward_message',
        payload: { to, sourceMessageId },
      });
      return c.json({ ok: true as const, messageId }, 200);
    });
}
