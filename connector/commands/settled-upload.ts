import { uploadObjectKey } from '../../core/keys.js';
import type { Logger } from '../../core/logger.js';
import { deleteObject, type MediaStore } from '../../core/media-store.js';
import type { CommandOutcome } from './outcome.js';

/**
 * A media or sticker send reads its upload (`accounts/<id>/uploads/…`) once, to prepare what
 * goes out; the file kept is the copy stored with the sent message (`media/`, as for a received
 * one: docs/media.md). So the upload is deleted once the send is settled (`done`: sent, failed,
 * refused, late, or a duplicate of a settled one); a command put back for later keeps it. Only
 * an upload of the command's own account is ever deleted.
 */
export async function dropUploadWhenSettled(
  deps: { mediaStore: MediaStore; logger: Logger },
  accountId: string,
  s3Key: string,
  outcome: Promise<CommandOutcome>,
): Promise<CommandOutcome> {
  const settled = await outcome;
  if (settled.kind === 'done' && s3Key.startsWith(uploadObjectKey(accountId, ''))) {
    // A failed delete leaves the upload to MEDIA_RETENTION_DAYS (or the account's deletion).
    await deleteObject(deps.mediaStore, s3Key).catch((error: unknown) =>
      deps.logger.warn({ err: error, accountId }, 'the settled send’s upload could not be deleted'),
    );
  }
  return settled;
}
