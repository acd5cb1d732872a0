import type { GroupMetadata, WASocket } from '@whiskeysockets/baileys';
import { BoundedCache } from '../../core/bounded-cache.js';

/** Groups kept per account; a group not sent to for a while is asked for again. */
const GROUP_METADATA_LIMIT = 500;
/** Bounds how long a change WhatsApp did not notify (or a notification missed) can go unseen. */
const GROUP_METADATA_TTL_MS = 10 * 60_000;

/**
 * The account's group metadata, handed to Baileys as `cachedGroupMetadata`: without it every
 * send to a group asks WhatsApp for the group's participants first (Socket/messages-send.js,
 * relayMessage). Filled by the first send (or by the group operations' answers); a group whose
 * participants change (`group-participants.update`, or our own add/remove) is dropped, so the
 * next send asks again and reaches the new member; subject and setting changes
 * (`groups.update`) are merged in. Kept per session: a new socket starts empty, since
 * changes made while it was away come as notifications it may handle after its first send.
 */
export class GroupMetadataCache {
  private readonly cache = new BoundedCache<string, GroupMetadata>('group-metadata', GROUP_METADATA_LIMIT, GROUP_METADATA_TTL_MS);
  private readonly inFlight = new Map<string, Promise<GroupMetadata>>();

  /** Baileys' `cachedGroupMetadata`: the known metadata, else asked once (concurrent sends share the query). */
  async metadataOf(sock: WASocket, groupJid: string): Promise<GroupMetadata> {
    const known = this.cache.get(groupJid);
    if (known) return known;
    let query = this.inFlight.get(groupJid);
    if (!query) {
      query = sock.groupMetadata(groupJid).then(
        (metadata) => {
          this.inFlight.delete(groupJid);
          this.remember(metadata);
          return metadata;
        },
        (error: unknown) => {
          this.inFlight.delete(groupJid);
          throw error;
        },
      );
      this.inFlight.set(groupJid, query);
    }
    return query;
  }

  remember(metadata: GroupMetadata): void {
    if (Array.isArray(metadata.participants)) this.cache.set(metadata.id, metadata);
  }

  forget(groupJid: string): void {
    this.cache.delete(groupJid);
  }

  clear(): void {
    this.cache.clear();
    this.inFlight.clear();
  }

  watch(sock: WASocket): void {
    sock.ev.on('groups.upsert', (groups) => {
      for (const group of groups) this.remember(group);
    });
    sock.ev.on('groups.update', (updates) => {
      for (const update of updates) {
        if (!update.id) continue;
        const known = this.cache.get(update.id);
        const { participants, ...change } = update;
        // A full answer (groupFetchAllParticipating emits these) replaces; a notification's change is merged.
        if (Array.isArray(participants) && update.subject !== undefined) this.remember({ ...change, participants } as GroupMetadata);
        else if (known) this.cache.set(update.id, { ...known, ...change });
      }
    });
    sock.ev.on('group-participants.update', ({ id }) => this.forget(id));
  }
}
