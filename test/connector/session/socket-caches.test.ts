import {
  addTransactionCapability,
  DEFAULT_CONNECTION_CONFIG,
  initAuthCreds,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
  type WASocket,
} from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { boundLidMappingCache, socketCaches } from '../../../connector/session/socket-caches.js';
import { cacheSizes } from '../../../core/bounded-cache.js';

const logger = pino({ level: 'silent' });

/** A key store in memory: what the LID mapping store writes through and reads on a cache miss. */
function memoryKeys(): SignalKeyStore {
  const data = new Map<string, unknown>();
  return {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const found: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        const value = data.get(`${type}:${id}`);
        if (value !== undefined) found[id] = value as SignalDataTypeMap[T];
      }
      return found;
    },
    async set(set: SignalDataSet) {
      for (const [type, entries] of Object.entries(set)) {
        for (const [id, value] of Object.entries(entries ?? {})) data.set(`${type}:${id}`, value);
      }
    },
  };
}

describe("Baileys' socket caches, bounded", () => {
  it('the socket config caches never hold more than their bound after more distinct keys', async () => {
    const caches = socketCaches();
    const devices = caches.userDevicesCache!;
    for (let i = 0; i < 1_500; i++) await devices.set(`user${i}`, [{ device: 0 }]);
    const size = cacheSizes()['baileys-user-devices']!;
    expect(size.entries).toBe(1_000);
    expect(size.maxEntries).toBe(1_000 * size.instances);
    // The most recent stay, the oldest went.
    expect(await devices.get('user1499')).toEqual([{ device: 0 }]);
    expect(await devices.get('user0')).toBeUndefined();
    for (let i = 0; i < 150; i++) await caches.callOfferCache!.set(`call${i}`, {});
    expect(cacheSizes()['baileys-call-offers']!.entries).toBe(100);
    for (let i = 0; i < 1_200; i++) await caches.msgRetryCounterCache!.set(`message${i}`, 1);
    expect(cacheSizes()['baileys-msg-retry-counters']!.entries).toBe(1_000);
    for (let i = 0; i < 1_200; i++) await caches.placeholderResendCache!.set(`message${i}`, true);
    expect(cacheSizes()['baileys-placeholder-resends']!.entries).toBe(1_000);
  });

  it('the LID mapping store keeps at most 2,000 mappings in memory and reads the others from the key store', async () => {
    const keys = addTransactionCapability(memoryKeys(), logger, { maxCommitRetries: 1, delayBetweenTriesMs: 1 });
    const repository = DEFAULT_CONNECTION_CONFIG.makeSignalRepository({ creds: initAuthCreds(), keys }, logger);
    expect(boundLidMappingCache({ signalRepository: repository } as unknown as WASocket)).toBe(true);
    const contacts = 1_500;
    const pairs = Array.from({ length: contacts }, (_, i) => ({
      pn: `1555${String(i).padStart(7, '0')}@s.whatsapp.net`,
      lid: `${9000 + i}@lid`,
    }));
    await repository.lidMapping.storeLIDPNMappings(pairs);
    // Two entries per contact (pn -> lid and lid -> pn): 3,000 distinct keys into 2,000.
    expect(cacheSizes()['baileys-lid-mappings']!.entries).toBe(2_000);
    expect(await repository.lidMapping.getLIDForPN(pairs[0]!.pn)).toBe('9000@lid');
    expect(await repository.lidMapping.getPNForLID(pairs.at(-1)!.lid)).toBe(
      `1555${String(contacts - 1).padStart(7, '0')}:0@s.whatsapp.net`,
    );
    expect(cacheSizes()['baileys-lid-mappings']!.entries).toBe(2_000);
  });
});
