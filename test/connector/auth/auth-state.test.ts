import { describe, expect, it } from 'vitest';
import { BufferJSON, proto } from '@whiskeysockets/baileys';
import { cacheSizes } from '../../../core/bounded-cache.js';
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { authSignalKey } from '../../../core/keys.js';
import { readCreds, readSignalKeys, signalKeyFormatOf, writeSignalKeys } from '../../../core/store/auth-state.js';
import { AuthStateClosedError, loadDynamoAuthState } from '../../../connector/auth/dynamo-auth-state.js';
import { silentLogger, useTestStack } from '../../support/test-stack.js';
import { waitFor } from '../../support/wait.js';

describe('Baileys auth state in DynamoDB', () => {
  const t = useTestStack();

  it('fresh collection: new creds, not linked, nothing stored until saved', async () => {
    const auth = await loadDynamoAuthState(t.table, 'auth_fresh', silentLogger);
    expect(auth.isLinked()).toBe(false);
    expect(auth.state.creds.noiseKey.public).toBeInstanceOf(Uint8Array);
    expect(await readCreds(t.table, 'auth_fresh')).toBeUndefined();
  });

  it('creds and keys round trip with their binary values intact', async () => {
    const first = await loadDynamoAuthState(t.table, 'auth_roundtrip', silentLogger);
    first.state.creds.me = { id: '15550001111:3@s.whatsapp.net', name: 'Tester' };
    await first.saveCreds();
    const preKey = { public: new Uint8Array([1, 2, 3]), private: new Uint8Array([4, 5, 6]) };
    const appStateKey = proto.Message.AppStateSyncKeyData.fromObject({ keyData: Buffer.from('secret'), timestamp: 7 });
    await first.state.keys.set({
      'pre-key': { '1': preKey },
      session: { 'alice.0': new Uint8Array([9, 9]) },
      'app-state-sync-key': { AAAA: appStateKey },
    });

    const second = await loadDynamoAuthState(t.table, 'auth_roundtrip', silentLogger);
    expect(second.isLinked()).toBe(true);
    expect(second.state.creds.me?.id).toBe('15550001111:3@s.whatsapp.net');
    expect(Buffer.from(second.state.creds.noiseKey.private)).toEqual(Buffer.from(first.state.creds.noiseKey.private));

    const preKeys = await second.state.keys.get('pre-key', ['1', '2']);
    expect(Buffer.from(preKeys['1']!.private)).toEqual(Buffer.from([4, 5, 6]));
    expect(preKeys['2']).toBeUndefined();
    const sessions = await second.state.keys.get('session', ['alice.0']);
    expect(Buffer.from(sessions['alice.0']!)).toEqual(Buffer.from([9, 9]));
    const appKeys = await second.state.keys.get('app-state-sync-key', ['AAAA']);
    expect(appKeys.AAAA).toBeInstanceOf(proto.Message.AppStateSyncKeyData);
    expect(Buffer.from(appKeys.AAAA!.keyData!).toString()).toBe('secret');
  });

  it('a long session is stored deflated once every connector reads it so (half its size: one write unit), and read back either way', async () => {
    // A session's JSON as libsignal serializes it: base64 keys under repeated field names.
    const chain = (n: number) => ({ chainKey: { counter: n, key: randomBytes(32) }, chainType: 2, messageKeys: {} });
    const session = {
      _sessions: Object.fromEntries(
        Array.from({ length: 2 }, (_, n) => [
          randomBytes(33).toString('base64'),
          { registrationId: 9005 + n, rootKey: randomBytes(32), _chains: { a: chain(1), b: chain(2), c: chain(3) } },
        ]),
      ),
      version: 'v1',
    };
    // Baileys types a session as bytes; libsignal hands it the object above.
    const value = session as unknown as Uint8Array;
    const item = async (id: string, type = 'session') =>
      (await t.table.doc.send(new GetCommand({ TableName: t.table.name, Key: authSignalKey('auth_deflate', type, id) }))).Item!;
    const auth = await loadDynamoAuthState(t.table, 'auth_deflate', silentLogger);

    await auth.state.keys.set({ session: { 'plain.0': value } });
    expect(typeof (await item('plain.0')).value).toBe('string');

    signalKeyFormatOf(t.table).deflateSessions = true;
    try {
      await auth.state.keys.set({
        session: { 'dana.0': value, 'short.0': new Uint8Array([1]) },
        'pre-key': { '3': { public: randomBytes(33), private: randomBytes(32) } },
      });
    } finally {
      signalKeyFormatOf(t.table).deflateSessions = false;
    }
    const deflated = await item('dana.0');
    expect(deflated.value).toBeUndefined();
    expect(deflated.z).toBeInstanceOf(Uint8Array);
    const json = JSON.stringify(session, BufferJSON.replacer);
    expect((deflated.z as Uint8Array).length).toBeLessThan(json.length * 0.7);
    // Short sessions and other keys stay as they are.
    expect(typeof (await item('short.0')).value).toBe('string');
    expect(typeof (await item('3', 'pre-key')).value).toBe('string');

    const reloaded = await loadDynamoAuthState(t.table, 'auth_deflate', silentLogger);
    const sessions = await reloaded.state.keys.get('session', ['dana.0', 'plain.0', 'short.0']);
    expect(JSON.stringify(sessions['dana.0'], BufferJSON.replacer)).toBe(json);
    expect(JSON.stringify(sessions['plain.0'], BufferJSON.replacer)).toBe(json);
    expect(Buffer.from(sessions['short.0'] as Uint8Array)).toEqual(Buffer.from([1]));
  });

  it('a null value deletes the key; clear() removes creds and keys', async () => {
    const auth = await loadDynamoAuthState(t.table, 'auth_clear', silentLogger);
    await auth.saveCreds();
    await auth.state.keys.set({ 'pre-key': { '5': { public: new Uint8Array([1]), private: new Uint8Array([2]) } } });
    await auth.state.keys.set({ 'pre-key': { '5': null } });
    const reloaded = await loadDynamoAuthState(t.table, 'auth_clear', silentLogger);
    expect((await reloaded.state.keys.get('pre-key', ['5']))['5']).toBeUndefined();

    await reloaded.state.keys.set({ session: { 'bob.0': new Uint8Array([1]) } });
    await reloaded.clear();
    expect(await readCreds(t.table, 'auth_clear')).toBeUndefined();
    const afterClear = await loadDynamoAuthState(t.table, 'auth_clear', silentLogger);
    expect((await afterClear.state.keys.get('session', ['bob.0']))['bob.0']).toBeUndefined();
  });

  it('close(): resolves once the key writes under way are stored, and refuses any after it', async () => {
    const auth = await loadDynamoAuthState(t.table, 'auth_closing', silentLogger);
    // Under way when the session closes: not awaited by whoever closes.
    const inFlight = auth.state.keys.set({ session: { 'carol.0': new Uint8Array([7]) } });
    // Past Baileys' in-memory cache (its promises settle before the next turn), on its way to the table.
    await new Promise((resolve) => setImmediate(resolve));
    await auth.close({ saveCreds: false });
    expect(await readSignalKeys(t.table, 'auth_closing', 'session', ['carol.0'])).toHaveProperty(['carol.0']);
    await inFlight;

    // A Baileys transaction committing after the close: refused, so it cannot land over the next owner's keys.
    await expect(auth.state.keys.set({ session: { 'carol.0': new Uint8Array([8]) }, 'pre-key': { '9': null } })).rejects.toThrow(
      AuthStateClosedError,
    );
    const stored = await readSignalKeys(t.table, 'auth_closing', 'session', ['carol.0']);
    expect(JSON.parse(stored['carol.0']!, BufferJSON.reviver)).toEqual(Buffer.from([7]));
  });

  it('close() saves the creds as they stand in memory; a save after it writes nothing', async () => {
    const auth = await loadDynamoAuthState(t.table, 'auth_closing_creds', silentLogger);
    // Changed in memory without a save, as by a creds.update Baileys emits after the dispatcher detached.
    auth.state.creds.me = { id: '15550002222:4@s.whatsapp.net' };
    await auth.close();
    expect(JSON.parse((await readCreds(t.table, 'auth_closing_creds'))!).me.id).toBe('15550002222:4@s.whatsapp.net');
    auth.state.creds.me = { id: '15550003333:5@s.whatsapp.net' };
    await auth.saveCreds();
    expect(JSON.parse((await readCreds(t.table, 'auth_closing_creds'))!).me.id).toBe('15550002222:4@s.whatsapp.net');
  });

  it('close({ saveCreds: false }) (lease lost, account deleted) leaves the stored creds alone', async () => {
    const auth = await loadDynamoAuthState(t.table, 'auth_lost', silentLogger);
    auth.state.creds.me = { id: '15550004444:6@s.whatsapp.net' };
    await auth.saveCreds();
    auth.state.creds.me = { id: '15550005555:7@s.whatsapp.net' };
    await auth.close({ saveCreds: false });
    expect(JSON.parse((await readCreds(t.table, 'auth_lost'))!).me.id).toBe('15550004444:6@s.whatsapp.net');
  });

  it('many keys at once (more than one batch) are all stored', async () => {
    const auth = await loadDynamoAuthState(t.table, 'auth_many', silentLogger);
    const preKeys: Record<string, { public: Uint8Array; private: Uint8Array }> = {};
    for (let i = 1; i <= 130; i++) preKeys[String(i)] = { public: new Uint8Array([i]), private: new Uint8Array([i, i]) };
    await auth.state.keys.set({ 'pre-key': preKeys });
    const reloaded = await loadDynamoAuthState(t.table, 'auth_many', silentLogger);
    const ids = Object.keys(preKeys);
    const got = await reloaded.state.keys.get('pre-key', ids);
    expect(Object.keys(got)).toHaveLength(130);
    expect(Buffer.from(got['130']!.private)).toEqual(Buffer.from([130, 130]));
  });

  it('key writes of many accounts at once are each stored when their set resolves, the last value of a key kept', async () => {
    const accounts = await Promise.all(
      Array.from({ length: 30 }, (_, n) => loadDynamoAuthState(t.table, `auth_together_${n}`, silentLogger)),
    );
    await Promise.all(
      accounts.map(async (auth, n) => {
        await auth.state.keys.set({ session: { 'carol.0': new Uint8Array([n, 1]) } });
        await auth.state.keys.set({ session: { 'carol.0': new Uint8Array([n, 2]) } });
      }),
    );
    for (let n = 0; n < accounts.length; n++) {
      const reloaded = await loadDynamoAuthState(t.table, `auth_together_${n}`, silentLogger);
      const sessions = await reloaded.state.keys.get('session', ['carol.0']);
      expect(Buffer.from(sessions['carol.0']!)).toEqual(Buffer.from([n, 2]));
    }
  });

  it("one account's writes never overtake each other, and another account's wait for neither", async () => {
    // The second collection's one key is stored before the first's 2,000, written beside them.
    const big = 'auth_order_big';
    const small = 'auth_order_small';
    const [bigAuth, smallAuth] = await Promise.all([big, small].map((name) => loadDynamoAuthState(t.table, name, silentLogger)));
    const preKeys: Record<string, { public: Uint8Array; private: Uint8Array }> = {};
    for (let i = 1; i <= 2_000; i++) preKeys[String(i)] = { public: new Uint8Array([1]), private: new Uint8Array([i % 256]) };
    const done: string[] = [];
    const bigWrites = [
      (async () => {
        await bigAuth!.state.keys.set({ 'pre-key': preKeys });
        done.push('big');
      })(),
      // Queued behind the 2,000 of its own collection: lands after them.
      bigAuth!.state.keys.set({ 'pre-key': { '7': { public: new Uint8Array([2]), private: new Uint8Array([70]) } } }),
    ];
    // The big write is out once its first keys are stored; the small one starts after that.
    await waitFor('the first pre-keys stored', async () => Object.keys(await readSignalKeys(t.table, big, 'pre-key', ['1'])).length > 0);
    await smallAuth!.state.keys.set({ session: { 'dave.0': new Uint8Array([1]) } });
    done.push('small');
    await Promise.all(bigWrites);
    expect(done).toEqual(['small', 'big']);
    const reloaded = await loadDynamoAuthState(t.table, big, silentLogger);
    const got = await reloaded.state.keys.get('pre-key', ['7', '2000']);
    expect(Buffer.from(got['7']!.private)).toEqual(Buffer.from([70]));
    expect(Buffer.from(got['2000']!.private)).toEqual(Buffer.from([2_000 % 256]));
  });

  it('a key read while absent is found once set, and absent again once deleted', async () => {
    const auth = await loadDynamoAuthState(t.table, 'auth_absent', silentLogger);
    expect(await auth.state.keys.get('session', ['dave.0'])).toEqual({});
    expect(await auth.state.keys.get('session', ['dave.0'])).toEqual({});
    await auth.state.keys.set({ session: { 'dave.0': new Uint8Array([7]) } });
    expect(Buffer.from((await auth.state.keys.get('session', ['dave.0']))['dave.0']!)).toEqual(Buffer.from([7]));
    const reloaded = await loadDynamoAuthState(t.table, 'auth_absent', silentLogger);
    expect(Buffer.from((await reloaded.state.keys.get('session', ['dave.0']))['dave.0']!)).toEqual(Buffer.from([7]));
    await auth.state.keys.set({ session: { 'dave.0': null } });
    expect((await auth.state.keys.get('session', ['dave.0']))['dave.0']).toBeFalsy();
    expect(await (await loadDynamoAuthState(t.table, 'auth_absent', silentLogger)).state.keys.get('session', ['dave.0'])).toEqual({});
  });

  // Bounds of the caches in front of DynamoDB (512 keys, 1,000 absent keys per account). A key
  // written straight to the table (behind the caches' back) shows which keys are still cached:
  // a cached one reads its old value, an evicted one is read again and shows the new value.
  const behindTheCachesBack = (collectionName: string, type: string, id: string, value: unknown) =>
    writeSignalKeys(t.table, collectionName, [{ type, id, value: JSON.stringify(value, BufferJSON.replacer) }]);

  it('holds at most 512 keys in memory: after 600 distinct keys the least recent are read again from the table', async () => {
    const before = cacheSizes()['signal-keys']?.entries ?? 0;
    const auth = await loadDynamoAuthState(t.table, 'auth_bounded', silentLogger);
    const sessions: Record<string, Uint8Array> = {};
    for (let i = 0; i < 600; i++) sessions[`peer${i}.0`] = new Uint8Array([i % 256, 1]);
    await auth.state.keys.set({ session: sessions });
    expect(cacheSizes()['signal-keys']!.entries - before).toBeLessThanOrEqual(512);

    await behindTheCachesBack('auth_bounded', 'session', 'peer0.0', new Uint8Array([0, 2]));
    await behindTheCachesBack('auth_bounded', 'session', 'peer599.0', new Uint8Array([87, 2]));
    const got = await auth.state.keys.get('session', ['peer0.0', 'peer599.0']);
    expect(Buffer.from(got['peer0.0']!)).toEqual(Buffer.from([0, 2]));
    expect(Buffer.from(got['peer599.0']!)).toEqual(Buffer.from([87, 1]));
    const all = await auth.state.keys.get('session', Object.keys(sessions));
    expect(Object.keys(all)).toHaveLength(600);
  });

  it('remembers at most 1,000 absent keys: after 1,100 the least recent are read again from the table', async () => {
    const before = cacheSizes()['signal-keys-absent']?.entries ?? 0;
    const auth = await loadDynamoAuthState(t.table, 'auth_absent_bounded', silentLogger);
    const ids = Array.from({ length: 1100 }, (_, i) => `nobody${i}.0`);
    expect(await auth.state.keys.get('session', ids)).toEqual({});
    expect(cacheSizes()['signal-keys-absent']!.entries - before).toBeLessThanOrEqual(1000);

    await behindTheCachesBack('auth_absent_bounded', 'session', 'nobody0.0', new Uint8Array([5]));
    await behindTheCachesBack('auth_absent_bounded', 'session', 'nobody1099.0', new Uint8Array([6]));
    const got = await auth.state.keys.get('session', ['nobody0.0', 'nobody1099.0']);
    expect(Buffer.from(got['nobody0.0']!)).toEqual(Buffer.from([5]));
    expect(got['nobody1099.0']).toBeUndefined();
  });
});
