import type { GroupMetadata, WASocket } from '@whiskeysockets/baileys';
import { BoundedCache } from '../../core/bounded-cache.js';
import type { Logger } from '../../core/logger.js';
import { chatWriterOf } from '../../core/store/chat-writer.js';
import type { Table } from '../../core/store/table.js';

/** Subjects kept per session; beyond this the least recently used go (a metadata query refills one). */
const SUBJECTS_LIMIT = 5_000;

/**
 * The subjects of an account's groups, which name its group chats: asked of WhatsApp once per
 * group (a metadata query, shared with sends through group-metadata.ts) and then kept current from Baileys' group events (creation, subject
 * changes), which also rename the stored chat.
 */
export class GroupSubjects {
  private readonly subjects = new BoundedCache<string, string>('group-subjects', SUBJECTS_LIMIT);

  constructor(
    private readonly table: Table,
    private readonly accountId: string,
    private readonly log: Logger,
  ) {}

  /** The group's subject, or undefined when WhatsApp does not tell (left, or no answer). */
  async subjectOf(metadataOf: (groupJid: string) => Promise<GroupMetadata>, groupJid: string): Promise<string | undefined> {
    const known = this.subjects.get(groupJid);
    if (known !== undefined) return known;
    try {
      const { subject } = await metadataOf(groupJid);
      this.remember(groupJid, subject);
      return subject;
    } catch (error) {
      this.log.debug({ err: error, groupJid }, 'group subject unavailable');
      return undefined;
    }
  }

  watch(sock: WASocket): void {
    const onChange = (groups: { id?: string; subject?: string }[]) => {
      for (const { id, subject } of groups) {
        if (!id || !subject || this.subjects.get(id) === subject) continue;
        this.remember(id, subject);
        chatWriterOf(this.table)
          .change(this.accountId, id, { name: subject })
          .catch((error: unknown) => this.log.warn({ err: error, groupJid: id }, 'renaming the group chat failed'));
      }
    };
    sock.ev.on('groups.upsert', onChange);
    sock.ev.on('groups.update', onChange);
  }

  private remember(groupJid: string, subject: string): void {
    this.subjects.set(groupJid, subject);
  }
}
