/**
 * A command consumer in a process of its own whose handler never finishes: it logs `command
 * started` with the command id and waits. SIGTERM stops the consumer (its drain bound given by
 * CONSUMER_DRAIN_MS) and exits 0 with `stopped`, the command still unfinished: what a connector
 * stopping in the middle of a long send leaves behind. Configured by the emulators' env.
 */
import { createClients, destroyClients } from '../../core/aws.js';
import { loadConfig } from '../../core/config.js';
import { logger } from '../../core/logger.js';
import { createQueues } from '../../core/queues.js';
import type { Command } from '../../core/schemas/command.js';
import { startCommandConsumer } from '../../connector/commands/consumer.js';
import type { CommandHandlers, CommandOutcome } from '../../connector/commands/outcome.js';

const config = loadConfig();
const clients = createClients(config);
const queues = createQueues(config, clients, logger);
const never = (command: Command): Promise<CommandOutcome> => {
  logger.info({ commandId: command.commandId }, 'command started');
  return new Promise(() => undefined);
};
const handlers: CommandHandlers = {
  connect: never,
  disconnect: never,
  delete_account: never,
  settings_changed: never,
  send_text: never,
  send_reply: never,
  send_media: never,
  send_reaction: never,
  delete_message: never,
  request_pairing_code: never,
  send_location: never,
  send_contact: never,
  send_poll: never,
  send_sticker: never,
  edit_message: never,
  forward_message: never,
  mark_chat_read: never,
  send_presence: never,
  request_history: never,
  fetch_media: never,
  group: never,
  socket_query: never,
  send_queued: never,
};
const consumer = startCommandConsumer({ queues, handlers, logger, waitSeconds: 1, drainMs: Number(process.env.CONSUMER_DRAIN_MS ?? 500) });
logger.info('consumer started');
process.once('SIGTERM', () => {
  void consumer.stop().then(() => {
    destroyClients(clients);
    logger.info('stopped');
    process.exit(0);
  });
});
