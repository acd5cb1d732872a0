import { describe, expect, it } from 'vitest';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../../../core/errors.js';
import { CLAIMS_BACKFILLED_KEY } from '../../../core/keys.js';
import { mediaStoreOf, type MediaStore } from '../../../core/media-store.js';
import { deleteAccountData } from '../../../core/store/account-deletion.js';
import { createAccount, holdsItsCollection } from '../../../core/store/accounts.js';
import { readCreds, writeCreds } from '../../../core/store/auth-state.js';
import { claimCollection, collectionHolder, releaseCollection } from '../../../core/store/collection-claims.js';
import { putLegacyAccount } from '../../support/legacy-account.js';
import { useTestStack } from '../../support/test-stack.js';

const t = useTestStack();
let counter = 0;
const uniqueId = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;
const media = (): MediaStore => mediaStoreOf(t.stack.config, t.stack.clients);

describe('collection claims', () => {
  it('claim, hold, release: only the holder can release, a released name is free', async () => {
    const name = uniqueId('c_');
    expect(await claimCollection(t.table, name, 'alice')).toBe(true);
    expect(await claimCollection(t.table, name, 'alice')).toBe(true);
    expect(await claimCollection(t.table, name, 'bob')).toBe(false);
    await releaseCollection(t.table, name, 'bob');
    expect(await collectionHolder(t.table, name)).toBe('alice');
    await releaseCollection(t.table, name, 'alice');
    expect(await collectionHolder(t.table, name)).toBeUndefined();
    expect(await claimCollection(t.table, name, 'bob')).toBe(true);
  });

  it('accounts from before claims: the default-name owner wins a shared collection, the other neither connects with nor deletes it', async () => {
    // A t.table as an older version left it: never backfilled, and an account that took over
    // another's session (the probe's `evil` with `auth_<fz>`), created before its victim.
    await t.table.doc.send(new DeleteCommand({ TableName: t.table.name, Key: CLAIMS_BACKFILLED_KEY }));
    const fz = uniqueId('fz');
    const evil = uniqueId('evil');
    const loner = uniqueId('loner');
    const shared = `auth_${fz}`;
    await putLegacyAccount(t.table, { id: evil, collectionName: shared, createdAt: '2020-01-01T00:00:00.000Z' });
    await putLegacyAccount(t.table, { id: fz, collectionName: shared, createdAt: '2020-01-02T00:00:00.000Z' });
    await putLegacyAccount(t.table, { id: loner, collectionName: `custom_${loner}`, createdAt: '2020-01-03T00:00:00.000Z' });
    await writeCreds(t.table, shared, '{"me":"fz"}');

    await expect(createAccount(t.table, { id: uniqueId('x'), collectionName: shared, status: 'connecting' })).rejects.toThrow(
      ConflictError,
    );
    await expect(createAccount(t.table, { id: uniqueId('y'), collectionName: `custom_${loner}`, status: 'connecting' })).rejects.toThrow(
      'collectionName already in use',
    );
    expect(await collectionHolder(t.table, shared)).toBe(fz);
    expect(await holdsItsCollection(t.table, { _id: fz, collectionName: shared })).toBe(true);
    expect(await holdsItsCollection(t.table, { _id: evil, collectionName: shared })).toBe(false);
    expect(await holdsItsCollection(t.table, { _id: loner, collectionName: `custom_${loner}` })).toBe(true);

    const counts = await deleteAccountData(t.table, media(), evil, shared);
    expect(counts.authItems).toBe(0);
    expect(await readCreds(t.table, shared)).toBe('{"me":"fz"}');
    expect(await collectionHolder(t.table, shared)).toBe(fz);
  });

  it('an account created between a release and the second deletion pass keeps its new session', async () => {
    const id = uniqueId('gone');
    const name = `auth_${id}`;
    await createAccount(t.table, { id, collectionName: name, status: 'connecting' });
    await writeCreds(t.table, name, '{"me":"old"}');
    expect((await deleteAccountData(t.table, media(), id, name)).authItems).toBe(1);

    const successor = uniqueId('next');
    await createAccount(t.table, { id: successor, collectionName: name, status: 'connecting' });
    await writeCreds(t.table, name, '{"me":"new"}');
    // The connector's pass for the deleted account comes after the successor took the name.
    expect((await deleteAccountData(t.table, media(), id, name)).authItems).toBe(0);
    expect(await readCreds(t.table, name)).toBe('{"me":"new"}');
  });
});
