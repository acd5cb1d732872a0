import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';

/**
 * Items in DynamoDB's own attribute form, for the requests that go through the raw client
 * (`Table.raw`) instead of the document client: those of the inbound path, per message or per
 * batch of messages. The document client resolves its middleware stack again on every call
 * (lib-dynamodb refuses `cacheMiddleware`); the raw client builds it once per command, which
 * halves the SDK's CPU per request (docs/benchmarks/history.md, "third round"). Both clients marshal
 * with the same options, so an item reads back the same through either.
 */
export const MARSHALL_OPTIONS = Object.freeze({ removeUndefinedValues: true });

export type Attributes = Record<string, AttributeValue>;

export function toAttributes(value: object): Attributes {
  return marshall(value, MARSHALL_OPTIONS);
}

export function fromAttributes(item: Attributes): Record<string, unknown> {
  return unmarshall(item);
}
