import { UndiciHttpHandler } from '@smithy/undici-http-handler';
import type { ClientOptions } from '../core/aws.js';

/** Connections per endpoint of each client, as with the SDK's default handler. */
const MAX_CONNECTIONS = 50;

/**
 * The connector's DynamoDB and SQS clients speak HTTP through undici (the AWS SDK team's handler
 * for it) instead of node:http. Every inbound message costs a couple of these requests, and
 * node:http's per-request work (a ClientRequest, its socket listeners and timers, header
 * parsing, streams) was a large part of the connector's CPU per message (docs/benchmarks/history.md,
 * fourth round). Each client has connections of its own.
 */
export const CONNECTOR_CLIENT_OPTIONS: ClientOptions = {
  requestHandler: () => new UndiciHttpHandler({ dispatcher: { connections: MAX_CONNECTIONS } }),
};
