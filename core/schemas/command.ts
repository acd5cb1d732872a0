import { z } from 'zod';
import { jidSchema } from './jid.js';
import { groupOperationSchema } from './group.js';
import { socketQuerySchema } from './socket-query.js';

/**
 * Commands from the functions to the connector (SQS FIFO body). One message group per account
 * keeps their order; the command id is the deduplication id.
 */
const base = { accountId: z.string(), commandId: z.string() };

const mediaKindSchema = z.enum(['image', 'video', 'audio', 'document']);
export type MediaKind = z.infer<typeof mediaKindSchema>;

const connectCommandSchema = z.object({ ...base, type: z.literal('connect'), payload: z.object({}) });
const disconnectCommandSchema = z.object({ ...base, type: z.literal('disconnect'), payload: z.object({}) });
/**
 * The account's settings changed (PATCH /accounts/:accountId/settings): a session running it
 * reads them again. Without them in the payload: the proxy's password stays out of the queue.
 */
const settingsChangedCommandSchema = z.object({ ...base, type: z.literal('settings_changed'), payload: z.object({}) });
const deleteAccountCommandSchema = z.object({
  ...base,
  type: z.literal('delete_account'),
  payload: z.object({ collectionName: z.string() }),
});
const sendTextCommandSchema = z.object({
  ...base,
  type: z.literal('send_text'),
  payload: z.object({ messageId: z.string(), to: jidSchema('to'), text: z.string() }),
});
const sendReplyCommandSchema = z.object({
  ...base,
  type: z.literal('send_reply'),
  payload: z.object({
    messageId: z.string(),
    to: jidSchema('to'),
    chatId: jidSchema('chatId'),
    text: z.string(),
    quotedMessageId: z.string(),
  }),
});
const sendMediaCommandSchema = z.object({
  ...base,
  type: z.literal('send_media'),
  payload: z.object({
    messageId: z.string(),
    to: jidSchema('to'),
    kind: mediaKindSchema,
    s3Key: z.string(),
    mimetype: z.string(),
    fileName: z.string().optional(),
    caption: z.string().optional(),
    size: z.number().int().nonnegative(),
    /** Audio only: send as a voice note. */
    ptt: z.boolean().optional(),
  }),
});
const sendReactionCommandSchema = z.object({
  ...base,
  type: z.literal('send_reaction'),
  payload: z.object({ messageId: z.string(), to: jidSchema('to'), targetMessageId: z.string(), emoji: z.string() }),
});
const deleteMessageCommandSchema = z.object({
  ...base,
  type: z.literal('delete_message'),
  payload: z.object({ messageId: z.string(), to: jidSchema('to'), targetMessageId: z.string() }),
});

/** Ask WhatsApp for a code to link the account by phone number; the answer goes to a pairing-code request record. */
const requestPairingCodeCommandSchema = z.object({
  ...base,
  type: z.literal('request_pairing_code'),
  payload: z.object({ phoneNumber: z.string() }),
});

const sendLocationCommandSchema = z.object({
  ...base,
  type: z.literal('send_location'),
  payload: z.object({
    messageId: z.string(),
    to: jidSchema('to'),
    latitude: z.number(),
    longitude: z.number(),
    name: z.string().optional(),
    address: z.string().optional(),
  }),
});
/** Contact cards: the connector builds each vCard from the name and phone. */
const sendContactCommandSchema = z.object({
  ...base,
  type: z.literal('send_contact'),
  payload: z.object({
    messageId: z.string(),
    to: jidSchema('to'),
    contacts: z.array(z.object({ name: z.string(), phone: z.string() })),
  }),
});
const sendPollCommandSchema = z.object({
  ...base,
  type: z.literal('send_poll'),
  payload: z.object({
    messageId: z.string(),
    to: jidSchema('to'),
    name: z.string(),
    options: z.array(z.string()),
    selectableCount: z.number().int().nonnegative(),
  }),
});
/** An uploaded WebP, PNG or JPEG; the connector makes a 512×512 WebP of the latter two. */
const sendStickerCommandSchema = z.object({
  ...base,
  type: z.literal('send_sticker'),
  payload: z.object({ messageId: z.string(), to: jidSchema('to'), s3Key: z.string(), mimetype: z.string(), size: z.number().int() }),
});
const editMessageCommandSchema = z.object({
  ...base,
  type: z.literal('edit_message'),
  payload: z.object({ messageId: z.string(), to: jidSchema('to'), targetMessageId: z.string(), text: z.string() }),
});
/** A stored message sent again to `to`; stored media is sent from S3. */
const forwardMessageCommandSchema = z.object({
  ...base,
  type: z.literal('forward_message'),
  payload: z.object({ messageId: z.string(), to: jidSchema('to'), sourceMessageId: z.string() }),
});
/** Read receipts for the chat's unread messages. `messageId` names the request's outbound record. */
const markChatReadCommandSchema = z.object({
  ...base,
  type: z.literal('mark_chat_read'),
  payload: z.object({ messageId: z.string(), to: jidSchema('to') }),
});
/**
 * The phone is asked for `count` messages of the chat older than its oldest stored one
 * (docs/history.md); they come back as an on-demand history sync. `messageId` names the
 * request's outbound record.
 */
const requestHistoryCommandSchema = z.object({
  ...base,
  type: z.literal('request_history'),
  payload: z.object({ messageId: z.string(), to: jidSchema('to'), count: z.number().int().min(1).max(50) }),
});
/**
 * The media of an imported message, fetched from WhatsApp on its first download (docs/history.md).
 * `messageId` names the request's outbound record; `targetMessageId` the message.
 */
const fetchMediaCommandSchema = z.object({
  ...base,
  type: z.literal('fetch_media'),
  payload: z.object({ messageId: z.string(), to: jidSchema('to'), targetMessageId: z.string() }),
});
export const presenceStateSchema = z.enum(['typing', 'recording', 'paused', 'available', 'unavailable']);
const sendPresenceCommandSchema = z.object({
  ...base,
  type: z.literal('send_presence'),
  payload: z.object({ messageId: z.string(), to: jidSchema('to'), state: presenceStateSchema }),
});
/**
 * A group operation (list, create, metadata, participants, update, invite, leave); the answer goes
 * to a group request record. It also carries a socket query: the way an API from before
 * `socket_query` asked one, which connectors keep running (docs/design.md, rolling deploys).
 */
const groupCommandSchema = z.object({
  ...base,
  type: z.literal('group'),
  payload: z.union([groupOperationSchema, socketQuerySchema]),
});
/**
 * A question answered from the live socket (number check, profile picture); the answer goes to a
 * group request record, like a group operation's.
 */
const socketQueryCommandSchema = z.object({ ...base, type: z.literal('socket_query'), payload: socketQuerySchema });

/** Every send of a message: what a paced account queues (docs/sending.md#paced-sends). */
const messageSendCommandSchemas = [
  sendTextCommandSchema,
  sendReplyCommandSchema,
  sendMediaCommandSchema,
  sendReactionCommandSchema,
  deleteMessageCommandSchema,
  sendLocationCommandSchema,
  sendContactCommandSchema,
  sendPollCommandSchema,
  sendStickerCommandSchema,
  editMessageCommandSchema,
  forwardMessageCommandSchema,
] as const;
const pacedSendCommandSchema = z.discriminatedUnion('type', messageSendCommandSchemas);
export type PacedSendCommand = z.infer<typeof pacedSendCommandSchema>;

/**
 * A send waiting in a paced account's queue (core/store/send-queue.ts), as stored and as the
 * `send_queued` command hands it to the connector: the send's own command, its place in the
 * queue (`ticket`), its deadline (a plain send's SEND_TIMEOUT_MS; an async one's much later) and
 * what the API answered.
 */
export const queuedSendSchema = z.object({
  ticket: z.number().int().positive(),
  messageId: z.string(),
  send: pacedSendCommandSchema,
  /** ISO time the API queued it. */
  createdAt: z.string(),
  /** Unix ms: the earliest time the limits allowed it when queued (its gap not included). */
  notBefore: z.number().int(),
  /** Unix ms: claimed by then or never sent (the outbound record's deadline). */
  deadline: z.number().int(),
  /** Queued with `Prefer: respond-async`: nobody waits for it. */
  async: z.boolean(),
});
export type QueuedSend = z.infer<typeof queuedSendSchema>;

/**
 * A send was queued for a paced account: the connector running it takes it into the account's
 * pacer at once and acks (connector/pacing/). The send itself goes in its turn, never holding up
 * the shard's queue.
 */
const sendQueuedCommandSchema = z.object({ ...base, type: z.literal('send_queued'), payload: queuedSendSchema });

export const commandSchema = z.discriminatedUnion('type', [
  connectCommandSchema,
  disconnectCommandSchema,
  settingsChangedCommandSchema,
  deleteAccountCommandSchema,
  ...messageSendCommandSchemas,
  requestPairingCodeCommandSchema,
  markChatReadCommandSchema,
  sendPresenceCommandSchema,
  requestHistoryCommandSchema,
  fetchMediaCommandSchema,
  groupCommandSchema,
  socketQueryCommandSchema,
  sendQueuedCommandSchema,
]);
export type Command = z.infer<typeof commandSchema>;
export type CommandType = Command['type'];
/** The command of one type, e.g. `CommandOf<'send_text'>`. */
export type CommandOf<T extends CommandType> = Extract<Command, { type: T }>;
/** Commands that send something and finish an outbound record. */
export type SendCommand = CommandOf<
  'send_text' | 'send_reply' | 'send_media' | 'send_reaction' | 'delete_message' | KindCommandType | 'request_history' | 'fetch_media'
>;
/** The sends and actions of connector/commands/kind-handlers.ts. */
type KindCommandType =
  | 'send_location'
  | 'send_contact'
  | 'send_poll'
  | 'send_sticker'
  | 'edit_message'
  | 'forward_message'
  | 'mark_chat_read'
  | 'send_presence';
