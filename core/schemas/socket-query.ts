import { z } from 'zod';

/**
 * Socket queries: questions about a contact that only WhatsApp can answer, asked on the account's
 * live socket (one `socket_query` command, functions/groups/contacts.ts), and the answers the
 * connector records for them. They share the group operations' request record
 * (core/store/group-requests.ts) and its statuses.
 */
export const socketQuerySchema = z.discriminatedUnion('op', [
  /** Whether a phone number is on WhatsApp (usync `contact`). */
  z.object({ op: z.literal('contact_exists'), phone: z.string() }),
  /** A contact's (or group's) profile picture URL. */
  z.object({ op: z.literal('contact_picture'), jid: z.string() }),
]);
export type SocketQuery = z.infer<typeof socketQuerySchema>;

const SOCKET_QUERY_OPS: ReadonlySet<string> = new Set(socketQuerySchema.options.map((option) => option.shape.op.value));

/** Whether a `group` command's payload is a socket query (the way an API before `socket_query` sent one). */
export const isSocketQuery = (operation: { op: string }): operation is SocketQuery => SOCKET_QUERY_OPS.has(operation.op);

/** What the connector records as the answer of each query (the API answers it as is). */
export type SocketQueryAnswer = { exists: boolean; jid?: string } | { url: string | null };
