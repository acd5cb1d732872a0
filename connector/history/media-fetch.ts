import { lazyChild } from '../../core/lazy-child.js';
import type { CommandOf } from '../../core/schemas/command.js';
import { findHistoryMedia, MEDIA_GONE, setFetchedMedia } from '../../core/store/history-media.js';
import { findMessage } from '../../core/store/messages.js';
import { attachMessageMedia } from '../inbound/store-media.js';
import { keyOf, type SendDeps, SendRejectedError, sendRunner } from '../commands/send-handlers.js';

const FETCH_TIMEOUT_MS = 2 * 60_000;

/** The CDN's answer for media it no longer has (Baileys' REUPLOAD_REQUIRED_STATUS). */
const goneFromCdn = (error: unknown) => {
  const status = (error as { output?: { statusCode?: unknown } } | undefined)?.output?.statusCode;
  return status === 404 || status === 410;
};

/**
 * `fetch_media`: the media of an imported message, fetched from WhatsApp on its first download
 * (docs/history.md) with the media key and path kept at the import (core/store/history-media.ts),
 * stored in S3 like a live message's, and the row given its mediaId. When WhatsApp no longer
 * has the file, Baileys asks the phone to upload it again (`updateMediaMessage`, the session's
 * download does so); when that fails too, the request fails with MEDIA_GONE.
 */
export function historyMediaHandlers(deps: SendDeps) {
  const runSend = sendRunner(deps);
  const { table, mediaStore } = deps;
  return {
    fetch_media: (command: CommandOf<'fetch_media'>) =>
      runSend(command, async () => {
        const { accountId } = command;
        const { targetMessageId } = command.payload;
        const message = await findMessage(table, accountId, targetMessageId);
        if (!message?.hasMedia) throw new SendRejectedError(MEDIA_GONE);
        if (message.mediaId) return { action: async () => undefined };
        const content = await findHistoryMedia(table, accountId, targetMessageId);
        if (!content) throw new SendRejectedError(MEDIA_GONE);
        const log = lazyChild(deps.logger, () => ({ accountId, messageId: targetMessageId }));
        return {
          action: async (sock, handle) => {
            const download = handle.storeContext?.download;
            if (!download) throw new Error(MEDIA_GONE);
            // Loaded here, in a session that has it already: an empty connector never loads
            // Baileys (test/connector/empty-connector.test.ts).
            const { proto } = await import('@whiskeysockets/baileys');
            const original = { key: keyOf(message), message: proto.Message.decode(content) };
            const fetch = async () => {
              try {
                return await download(original);
              } catch (error) {
                // Baileys rc14 never asks the phone itself: its downloadMediaMessage reads
                // `error.status`, and the CDN's 404/410 comes as a Boom with `output.statusCode`
                // (WhiskeySockets/Baileys#2767). The phone uploads the file again, then it is fetched
                // from its new path (updateMediaMessage rewrites it in `original`).
                if (!goneFromCdn(error)) throw error;
                log.info('media gone from the CDN: asking the phone to upload it again');
                await sock.updateMediaMessage(original);
                return download(original);
              }
            };
            const stored = { ...message };
            const descriptor = {
              mimetype: message.mimetype ?? 'application/octet-stream',
              ...(message.fileName ? { fileName: message.fileName } : {}),
              ...(message.fileLength ? { fileLength: message.fileLength } : {}),
            };
            await attachMessageMedia({ table, mediaStore }, accountId, stored, descriptor, fetch, FETCH_TIMEOUT_MS, log);
            if (!stored.mediaId) throw new Error(MEDIA_GONE);
            await setFetchedMedia(table, accountId, targetMessageId, stored.mediaId);
          },
        };
      }),
  };
}
