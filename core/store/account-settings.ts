import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { accountKey } from '../keys.js';
import type { Account } from '../schemas/account.js';
import { mergeSettings, storedSettingsOf, type AccountSettings, type SettingsPatch } from '../schemas/settings.js';
import { findAccount, getAccount } from './accounts.js';
import { ITEM_EXISTS, writeIfCondition, type Table } from './table.js';

/**
 * An account's settings live on its account item (`settings`, with `settingsVersion`): the
 * connector reads them with the account it starts, at no extra request, and a PATCH costs one
 * read (the account, which the route looks up anyway) and one conditional write.
 */

/** The settings of an account item, every absent field at its default (`pacing`: SEND_PACING_DEFAULT). */
export function settingsOf(account: Pick<Account, 'settings'>, pacing: boolean): AccountSettings {
  return storedSettingsOf(account.settings, pacing);
}

/**
 * A PATCH that lost a race reads and writes again. Each lost try means another PATCH was
 * written, so with N at once the last needs N tries at most; past this many (a client hammering
 * one account) the answer is 409.
 */
const MAX_WRITE_TRIES = 20;

/** The write applies only over the version read: two PATCHes at once never lose one's fields. */
const SAME_SETTINGS_VERSION = 'settingsVersion = :read';
const NO_SETTINGS_VERSION = 'attribute_not_exists(settingsVersion)';

/**
 * Merges `patch` into the account's settings (core/schemas/settings.ts, `mergeSettings`) and
 * stores the result; answers the whole settings. `read`: the account as the caller read it
 * (its first try is written over that version; a race reads it again, strongly consistent).
 * ValidationError when the merged settings break a rule, NotFoundError when the account is gone.
 */
export async function updateSettings(
  table: Table,
  accountId: string,
  patch: SettingsPatch,
  pacing: boolean,
  read?: Account,
): Promise<AccountSettings> {
  let account = read;
  for (let tries = 0; tries < MAX_WRITE_TRIES; tries++) {
    account ??= await getAccount(table, accountId, true);
    const merged = mergeSettings(settingsOf(account, pacing), patch);
    if ('problem' in merged) throw new ValidationError(merged.problem);
    const version = account.settingsVersion;
    const written = await writeIfCondition(
      table.doc.send(
        new UpdateCommand({
          TableName: table.name,
          Key: accountKey(accountId),
          UpdateExpression: 'SET settings = :settings, settingsVersion = :next',
          ConditionExpression: `${ITEM_EXISTS} AND ${version === undefined ? NO_SETTINGS_VERSION : SAME_SETTINGS_VERSION}`,
          ExpressionAttributeValues: {
            ':settings': merged,
            ':next': (version ?? 0) + 1,
            ...(version === undefined ? {} : { ':read': version }),
          },
        }),
      ),
    );
    if (written) return merged;
    account = await findAccount(table, accountId, true);
    if (!account) throw new NotFoundError('Account not found');
  }
  throw new ConflictError('Settings changed by other requests meanwhile; try again');
}
