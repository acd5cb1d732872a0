import { newGroupId, newInviteCode, type Group, type GroupRole } from './model.js';

/**
 * Every group of the network by id, and the groups of each member by phone (the
 * `participating` query and fan-out never scan all groups). `onChange` is called after every
 * mutation worth persisting.
 */
export class GroupRegistry {
  private readonly byId = new Map<string, Group>();
  private readonly byMember = new Map<string, Set<string>>();
  /** Metadata queries (`<query request="interactive"/>`) asked by each phone's devices, for the control API. */
  private readonly metadataQueries = new Map<string, number>();

  constructor(private readonly onChange: () => void = () => {}) {}

  /** Restores a group (snapshot load). */
  add(group: Group): void {
    this.byId.set(group.id, group);
    for (const phone of group.participants.keys()) this.index(phone, group.id);
  }

  create(creator: string, subject: string, members: readonly string[], now = Math.floor(Date.now() / 1000)): Group {
    let id = newGroupId();
    while (this.byId.has(id)) id = newGroupId();
    const participants = new Map<string, GroupRole>([[creator, 'superadmin']]);
    for (const phone of members) if (!participants.has(phone)) participants.set(phone, null);
    const group: Group = {
      id,
      subject,
      subjectOwner: creator,
      subjectTime: now,
      creator,
      creation: now,
      participants,
      inviteCode: newInviteCode(),
    };
    this.add(group);
    this.onChange();
    return group;
  }

  countMetadataQuery(phone: string): void {
    this.metadataQueries.set(phone, (this.metadataQueries.get(phone) ?? 0) + 1);
  }

  metadataQueriesOf(phone: string): number {
    return this.metadataQueries.get(phone) ?? 0;
  }

  get(id: string): Group | undefined {
    return this.byId.get(id);
  }

  all(): IterableIterator<Group> {
    return this.byId.values();
  }

  /** The groups `phone` is a member of. */
  of(phone: string): Group[] {
    const out: Group[] = [];
    for (const id of this.byMember.get(phone) ?? []) {
      const group = this.byId.get(id);
      if (group) out.push(group);
    }
    return out;
  }

  join(group: Group, phone: string, role: GroupRole = null): void {
    group.participants.set(phone, role);
    this.index(phone, group.id);
    this.onChange();
  }

  leave(group: Group, phone: string): void {
    group.participants.delete(phone);
    this.byMember.get(phone)?.delete(group.id);
    this.onChange();
  }

  changed(): void {
    this.onChange();
  }

  private index(phone: string, id: string): void {
    let ids = this.byMember.get(phone);
    if (!ids) {
      ids = new Set();
      this.byMember.set(phone, ids);
    }
    ids.add(id);
  }
}
