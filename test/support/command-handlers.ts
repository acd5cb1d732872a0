import type { CommandHandlers, CommandOutcome } from '../../connector/commands/outcome.js';
import type { Command } from '../../core/schemas/command.js';

/** Every command type answered by one function (for suites where the type does not matter). */
export function handlersFrom(handle: (command: Command) => Promise<CommandOutcome>): CommandHandlers {
  return {
    connect: handle,
    disconnect: handle,
    delete_account: handle,
    settings_changed: handle,
    send_text: handle,
    send_reply: handle,
    send_media: handle,
    send_reaction: handle,
    delete_message: handle,
    request_pairing_code: handle,
    send_location: handle,
    send_contact: handle,
    send_poll: handle,
    send_sticker: handle,
    edit_message: handle,
    forward_message: handle,
    mark_chat_read: handle,
    send_presence: handle,
    request_history: handle,
    fetch_media: handle,
    group: handle,
    socket_query: handle,
    send_queued: handle,
  };
}
