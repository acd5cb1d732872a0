import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BufferJSON, type BinaryNode } from '@whiskeysockets/baileys';
import type { NoiseKeys, TlsMaterial } from './certs.js';
import type { Account, CompanionDevice, PhoneInboxEntry } from './network/model.js';

const SNAPSHOT_FILE = 'network.json';
const SNAPSHOT_VERSION = 1;
const DEBOUNCE_MS = 1000;

export interface Snapshot {
  version: number;
  noiseKeys: NoiseKeys;
  tls: TlsMaterial;
  accounts: Account[];
  /** Where the previous run listened (restarts may reuse them). */
  ports?: { chat: number; control: number; media: number };
}

interface StoredDevice extends Omit<CompanionDevice, 'preKeys'> {
  preKeys: [number, Buffer][];
}
interface StoredAccount extends Omit<Account, 'devices' | 'phoneIdentity'> {
  phoneIdentity: Omit<Account['phoneIdentity'], 'sessions'> & { sessions: [string, unknown][] };
  devices: StoredDevice[];
}

function toStored(account: Account): StoredAccount {
  return {
    ...account,
    phoneIdentity: { ...account.phoneIdentity, sessions: [...account.phoneIdentity.sessions] },
    devices: [...account.devices.values()].map((d) => ({ ...d, preKeys: [...d.preKeys] })),
  };
}

function fromStored(stored: StoredAccount): Account {
  return {
    ...stored,
    phoneIdentity: {
      ...stored.phoneIdentity,
      inbox: stored.phoneIdentity.inbox as PhoneInboxEntry[],
      undecrypted: stored.phoneIdentity.undecrypted ?? [],
      sessions: new Map(stored.phoneIdentity.sessions),
    },
    devices: new Map(
      stored.devices.map((d) => [d.device, { ...d, queue: d.queue as BinaryNode[], preKeys: new Map(d.preKeys) }]),
    ),
  };
}

/**
 * The network's state as one JSON snapshot in the data directory, written at most every
 * DEBOUNCE_MS (never per message) by write-then-rename, and synchronously on stop.
 */
export class Persistence {
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly file: string;

  constructor(
    readonly dataDir: string,
    private readonly snapshot: () => Snapshot,
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
    const raw = JSON.parse(text, BufferJSON.reviver) as Omit<Snapshot, 'accounts'> & { accounts: StoredAccount[] };
    if (raw.version !== SNAPSHOT_VERSION) throw new Error(`unsupported sandbox snapshot version ${raw.version}`);
    return { ...raw, accounts: raw.accounts.map(fromStored) };
  }

  private serialize(): string {
    const snap = this.snapshot();
    return JSON.stringify({ ...snap, version: SNAPSHOT_VERSION, accounts: snap.accounts.map(toStored) }, BufferJSON.replacer);
  }

  schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const text = this.serialize();
      this.writing = this.writing.then(async () => {
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
    await this.writing.catch(() => undefined);
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, this.serialize());
    renameSync(tmp, this.file);
  }
}
