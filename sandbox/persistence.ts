import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BufferJSON, type BinaryNode } from '@whiskeysockets/baileys';
import type { NoiseKeys, TlsMaterial } from './certs.js';
import type { Account, CompanionDevice, PhoneChat, PhoneInboxEntry } from './network/model.js';
import { unreceiptedInOrder } from './network/delivery.js';
import { SerialQueue } from '../core/serial.js';
import type { Group, GroupRole } from './groups/model.js';

const SNAPSHOT_FILE = 'network.json';
const SNAPSHOT_VERSION = 2;
const DEBOUNCE_MS = 1000;

export interface Snapshot {
  version: number;
  noiseKeys: NoiseKeys;
  tls: TlsMaterial;
  accounts: Account[];
  /** Absent in snapshots written before groups were modelled. */
  groups?: Group[];
  /** Where the previous run listened (restarts may reuse them). */
  ports?: { chat: number; control: number; media: number };
}

interface StoredDevice extends Omit<CompanionDevice, 'preKeys' | 'unreceipted'> {
  /** Base64 of packed records of a 4-byte big-endian id and a 32-byte key (hundreds per device). */
  preKeys: string;
}

const PREKEY_RECORD = 36;

/**
 * Packed pre-keys by device map, reused while the map is unchanged: keys are only appended
 * (uploads, new ids) or taken from the front (handed out), so size and the first and last id
 * tell whether it changed. Snapshots under message load then cost little.
 */
const packedCache = new WeakMap<Map<number, Buffer>, { size: number; first: number; last: number; packed: string }>();

function packPreKeys(preKeys: Map<number, Buffer>): string {
  const first = preKeys.keys().next().value ?? -1;
  let last = -1;
  for (const id of preKeys.keys()) last = id;
  const cached = packedCache.get(preKeys);
  if (cached && cached.size === preKeys.size && cached.first === first && cached.last === last) return cached.packed;
  const packed = packRecords(preKeys).toString('base64');
  packedCache.set(preKeys, { size: preKeys.size, first, last, packed });
  return packed;
}

function packRecords(preKeys: Map<number, Buffer>): Buffer {
  const packed = Buffer.allocUnsafe(preKeys.size * PREKEY_RECORD);
  let offset = 0;
  for (const [id, key] of preKeys) {
    packed.writeUInt32BE(id, offset);
    key.copy(packed, offset + 4, 0, 32);
    offset += PREKEY_RECORD;
  }
  return packed;
}

function unpackPreKeys(encoded: string): Map<number, Buffer> {
  const packed = Buffer.from(encoded, 'base64');
  const preKeys = new Map<number, Buffer>();
  for (let offset = 0; offset + PREKEY_RECORD <= packed.length; offset += PREKEY_RECORD) {
    preKeys.set(packed.readUInt32BE(offset), Buffer.from(packed.subarray(offset + 4, offset + PREKEY_RECORD)));
  }
  return preKeys;
}
interface StoredGroup extends Omit<Group, 'participants'> {
  participants: [string, GroupRole][];
}

const toStoredGroup = (group: Group): StoredGroup => ({ ...group, participants: [...group.participants] });
const fromStoredGroup = (stored: StoredGroup): Group => ({ ...stored, participants: new Map(stored.participants) });

interface StoredAccount extends Omit<Account, 'devices' | 'phoneIdentity'> {
  /** `chats` is absent in snapshots written before the phones kept their conversations. */
  phoneIdentity: Omit<Account['phoneIdentity'], 'sessions' | 'chats'> & { sessions: [string, unknown][]; chats?: PhoneChat[] };
  devices: StoredDevice[];
}

function toStored(account: Account): StoredAccount {
  return {
    ...account,
    phoneIdentity: {
      ...account.phoneIdentity,
      sessions: [...account.phoneIdentity.sessions],
      chats: [...account.phoneIdentity.chats.values()],
    },
    devices: [...account.devices.values()].map(toStoredDevice),
  };
}

/**
 * Stanzas sent but not receipted are stored at the front of the offline queue: after a restart
 * no connection holds them, so the next login gets them again with offline="1" (and snapshots
 * keep the version 2 format).
 */
function toStoredDevice({ unreceipted, queue, preKeys, ...device }: CompanionDevice): StoredDevice {
  const pending = unreceiptedInOrder(unreceipted);
  return { ...device, queue: pending.length ? [...pending, ...queue] : queue, preKeys: packPreKeys(preKeys) };
}

function fromStored(stored: StoredAccount): Account {
  return {
    ...stored,
    phoneIdentity: {
      ...stored.phoneIdentity,
      inbox: stored.phoneIdentity.inbox as PhoneInboxEntry[],
      undecrypted: stored.phoneIdentity.undecrypted ?? [],
      sessions: new Map(stored.phoneIdentity.sessions),
      chats: new Map((stored.phoneIdentity.chats ?? []).map((chat) => [chat.jid, chat])),
    },
    devices: new Map(
      stored.devices.map((d) => [
        d.device,
        {
          ...d,
          queue: d.queue as BinaryNode[],
          unreceipted: new Map(),
          // Version 1 snapshots kept [id, key] pairs.
          preKeys: Array.isArray(d.preKeys) ? new Map(d.preKeys as [number, Buffer][]) : unpackPreKeys(d.preKeys),
        },
      ]),
    ),
  };
}

/**
 * Replaces every Buffer/Uint8Array with BufferJSON's `{type: 'Buffer', data: base64}` form (read
 * back by BufferJSON.reviver). Walking once is far cheaper than a JSON.stringify replacer, which
 * sees each Buffer only after Buffer#toJSON turned it into an array of numbers.
 */
function encodeBuffers(value: unknown): unknown {
  if (value instanceof Uint8Array)
    return { type: 'Buffer', data: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') };
  if (Array.isArray(value)) return value.map(encodeBuffers);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = encodeBuffers(inner);
    return out;
  }
  return value;
}

/**
 * The network's state as one JSON snapshot in the data directory, written at most every
 * DEBOUNCE_MS (never per message) by write-then-rename, and synchronously on stop.
 */
export class Persistence {
  private timer: NodeJS.Timeout | undefined;
  private readonly writes = new SerialQueue();
  private readonly file: string;

  constructor(
    readonly dataDir: string,
    private readonly snapshot: () => Omit<Snapshot, 'version'>,
  ) {
    mkdirSync(dataDir, { recursive: true });
    this.file = join(dataDir, SNAPSHOT_FILE);
  }

  static load(dataDir: string): Snapshot | undefined {
    let text: string;
    try {
      text = readFileSync(join(dataDir, SNAPSHOT_FILE), 'utf8');
    } catch {
      return undefined;
    }
    const raw = JSON.parse(text, BufferJSON.reviver) as Omit<Snapshot, 'accounts' | 'groups'> & {
      accounts: StoredAccount[];
      groups?: StoredGroup[];
    };
    if (raw.version !== 1 && raw.version !== SNAPSHOT_VERSION) throw new Error(`unsupported sandbox snapshot version ${raw.version}`);
    return { ...raw, accounts: raw.accounts.map(fromStored), groups: (raw.groups ?? []).map(fromStoredGroup) };
  }

  private serialize(): string {
    const snap = this.snapshot();
    return JSON.stringify(
      encodeBuffers({
        ...snap,
        version: SNAPSHOT_VERSION,
        accounts: snap.accounts.map(toStored),
        groups: (snap.groups ?? []).map(toStoredGroup),
      }),
    );
  }

  schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const text = this.serialize();
      void this.writes.run(async () => {
        const tmp = `${this.file}.tmp`;
        await writeFile(tmp, text);
        await rename(tmp, this.file);
      });
    }, DEBOUNCE_MS);
  }

  /** Writes the current state now (on stop). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.writes.drained();
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, this.serialize());
    renameSync(tmp, this.file);
  }
}
