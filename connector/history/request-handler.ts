import { messagesGsi1pk } from '../../core/keys.js';
import type { CommandOf } from '../../core/schemas/command.js';
import { messageSchema } from '../../core/schemas/message.js';
import { queryGsi1 } from '../../core/store/paging.js';
import { keyOf, type SendDeps, SendRejectedError, sendRunner } from '../commands/send-handlers.js';

/**
 * `request_history`: asks the account's phone for older messages of a chat (Baileys'
 * `fetchMessageHistory`, a peer message to device 0), anchored on the chat's oldest stored
 * message. It goes the way of a send (send-handlers.ts): the API waits until the request left.
 * The messages come back as an ON_DEMAND history sync, imported like the others (history-import.ts).
 */
export function historyRequestHandlers(deps: SendDeps) {
  const runSend = sendRunner(deps);
  return {
    request_history: (command: CommandOf<'request_history'>) =>
      runSend(command, async () => {
        const { to, count } = command.payload;
        const [oldest] = await queryGsi1(deps.table, messagesGsi1pk(command.accountId, to), { limit: 1, skip: 0 }, 'oldest_first');
        if (!oldest) throw new SendRejectedError('no stored message in the chat to ask for older ones');
        const message = messageSchema.parse(oldest);
        return {
          action: async (sock) => {
            await sock.fetchMessageHistory(count, keyOf(message), message.timestamp);
          },
        };
      }),
  };
}
