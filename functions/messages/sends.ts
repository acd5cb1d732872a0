import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { OperationFailedError, ValidationError } from '../../core/errors.js';
import { MESSAGE_ID_PATTERN } from '../../core/jid.js';
import { jidSchema } from '../../core/schemas/jid.js';
import { findMessage } from '../../core/store/messages.js';
import { idempotentRequest } from './idempotency.js';
import { accountOf } from '../http/known-account.js';
import { messageResponse } from '../http/responses.js';
import { newRouter } from '../http/router.js';
import { jsonSendRequest, sendErrors, sentResponse } from './route-parts.js';
import { sendAndWait } from './send-wait.js';
import { sendOptionsOf } from './async-sends.js';
import type { AppEnv, Services } from '../http/services.js';
import { requiredString } from '../http/validation.js';

/** WhatsApp's own limit; longer text answers `internal_error` (docs/api.md). */
const MAX_TEXT_LENGTH = 4096;

/** A message id field, checked once the required fields are all there. */
const messageIdField = (field: string) =>
  z.string().regex(MESSAGE_ID_PATTERN, { error: `${field} must be a message id (letters and digits)` });

// Each body is checked in two steps, so that a missing field is reported before a malformed one.
const textBody = z
  .object({
    to: requiredString('to and message are required'),
    message: requiredString('to and message are required'),
  })
  .pipe(z.object({ to: jidSchema('to'), message: z.string() }));
const replyBody = z
  .object({
    to: requiredString('to, message and quotedMessageId are required'),
    message: requiredString('to, message and quotedMessageId are required'),
    quotedMessageId: requiredString('to, message and quotedMessageId are required'),
    chatId: z.string({ error: 'chatId must be a string' }).optional(),
  })
  .pipe(
    z.object({
      to: jidSchema('to'),
      message: z.string(),
      quotedMessageId: messageIdField('quotedMessageId'),
      chatId: jidSchema('chatId').optional(),
    }),
  );
const reactBody = z
  .object({
    to: requiredString('to, messageId and emoji are required'),
    messageId: requiredString('to, messageId and emoji are required'),
    emoji: requiredString('to, messageId and emoji are required'),
  })
  .pipe(z.object({ to: jidSchema('to'), messageId: messageIdField('messageId'), emoji: z.string() }));
const deleteBody = z
  .object({
    to: requiredString('to and messageId are required'),
    messageId: requiredString('to and messageId are required'),
  })
  .pipe(z.object({ to: jidSchema('to'), messageId: messageIdField('messageId') }));

const errors = sendErrors();
const doneResponse = messageResponse('Done');

const jsonBody = jsonSendRequest;

const sendText = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/message/send',
  summary: 'Send a text message',
  request: jsonBody(textBody),
  responses: { 200: sentResponse, ...errors },
});
const reply = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/message/reply',
  summary: 'Reply to (quote) a message',
  request: jsonBody(replyBody),
  responses: { 200: sentResponse, ...errors },
});
const react = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/message/react',
  summary: 'React to a message with an emoji',
  request: jsonBody(reactBody),
  responses: { 200: doneResponse, ...errors },
});
const remove = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/message/delete',
  summary: 'Delete a sent message for everyone',
  request: jsonBody(deleteBody),
  responses: { 200: doneResponse, ...errors },
});

function assertTextLength(text: string): void {
  if (text.length > MAX_TEXT_LENGTH) {
    throw new OperationFailedError(`message is longer than ${MAX_TEXT_LENGTH} characters`);
  }
}

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
const PICTOGRAPHIC = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u;
/** One grapheme that is an emoji (flags, skin tones and ZWJ sequences count as one). */
function isSingleEmoji(value: string): boolean {
  const graphemes = [...segmenter.segment(value)];
  return graphemes.length === 1 && PICTOGRAPHIC.test(value);
}

export function sendRoutes(services: Services): OpenAPIHono<AppEnv> {
  const { table } = services;
  return newRouter()
    .openapi(sendText, async (c) => {
      const { to, message } = c.req.valid('json');
      const account = accountOf(c);
      assertTextLength(message);
      const messageId = await sendAndWait(
        services,
        account,
        { type: 'send_text', payload: { to, text: message } },
        sendOptionsOf(c, idempotentRequest(c.req.valid('header')['idempotency-key'], sendText.path, { to, text: message })),
      );
      return c.json({ ok: true as const, messageId }, 200);
    })
    .openapi(reply, async (c) => {
      const { to, message, quotedMessageId, chatId: givenChatId } = c.req.valid('json');
      const account = accountOf(c);
      assertTextLength(message);
      // The chat of the quoted message when stored; otherwise the recipient's own chat.
      const chatId = givenChatId ?? (await findMessage(table, account._id, quotedMessageId))?.chatId ?? to;
      const messageId = await sendAndWait(
        services,
        account,
        { type: 'send_reply', payload: { to, chatId, text: message, quotedMessageId } },
        sendOptionsOf(
          c,
          idempotentRequest(c.req.valid('header')['idempotency-key'], reply.path, {
            to,
            text: message,
            quotedMessageId,
            chatId: givenChatId,
          }),
        ),
      );
      return c.json({ ok: true as const, messageId }, 200);
    })
    .openapi(react, async (c) => {
      const { to, messageId: targetMessageId, emoji } = c.req.valid('json');
      if (!isSingleEmoji(emoji)) throw new ValidationError('emoji must be a single emoji');
      const account = accountOf(c);
      await sendAndWait(
        services,
        account,
        { type: 'send_reaction', payload: { to, targetMessageId, emoji } },
        sendOptionsOf(
          c,
          idempotentRequest(c.req.valid('header')['idempotency-key'], react.path, {
            to,
            targetMessageId,
            emoji,
          }),
        ),
      );
      return c.json({ ok: true as const, message: 'Reaction sent' }, 200);
    })
    .openapi(remove, async (c) => {
      const { to, messageId: targetMessageId } = c.req.valid('json');
      const account = accountOf(c);
      await sendAndWait(
        services,
        account,
        { type: 'delete_message', payload: { to, targetMessageId } },
        sendOptionsOf(c, idempotentRequest(c.req.valid('header')['idempotency-key'], remove.path, { to, targetMessageId })),
      );
      return c.json({ ok: true as const, message: 'Message deleted for everyone' }, 200);
    });
}
