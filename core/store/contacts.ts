import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { CONTACT_SK_PREFIX, accountPartition, contactKey } from '../keys.js';
import { contactSchema, type Contact } from '../schemas/contact.js';
import { queryPartitionPrefix } from './paging.js';
import { withoutKeys, type Table } from './table.js';

const parseContact = (item: Record<string, unknown>) => contactSchema.parse(withoutKeys(item));

/** What is learnt of a contact: the fields given are written, the others kept. */
export type ContactChange = Pick<Contact, 'jid'> & Partial<Omit<Contact, 'jid'>>;

/** Writes what changed of a contact (created when new) and answers the contact as stored now. */
export async function recordContact(table: Table, accountId: string, change: ContactChange): Promise<Contact> {
  const fields = Object.entries(change).filter(([, value]) => value !== undefined);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets = fields.map(([field, value], index) => {
    names[`#f${index}`] = field;
    values[`:v${index}`] = value;
    return `#f${index} = :v${index}`;
  });
  const result = await table.doc.send(
    new UpdateCommand({
      TableName: table.name,
      Key: contactKey(accountId, change.jid),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
    }),
  );
  return parseContact(result.Attributes ?? {});
}

/** Every contact of the account (one Query of its contact prefix, paged by DynamoDB). */
export async function listContacts(table: Table, accountId: string): Promise<Contact[]> {
  const items = await queryPartitionPrefix(table, accountPartition(accountId), CONTACT_SK_PREFIX);
  return items.map(parseContact);
}

export async function findContact(table: Table, accountId: string, jid: string): Promise<Contact | undefined> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: contactKey(accountId, jid) }));
  return result.Item ? parseContact(result.Item) : undefined;
}
