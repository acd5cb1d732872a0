import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { afterAll, beforeAll } from 'vitest';
import { createQueues, type Queues } from '../../../core/queues.js';
import { tableOf } from '../../../core/store/table.js';
import { createInboundPipeline, type InboundPipeline } from '../../../connector/inbound/pipeline.js';
import { silentLogger, startTestStack, type TestStack } from '../../support/test-stack.js';

export const SELF_JID = '15550001111:3@s.whatsapp.net';
export const SELF = '15550001111@s.whatsapp.net';
export const PEER = '15550002222@s.whatsapp.net';
export const GROUP = '120363000000000001@g.us';
export const SECONDS = 1_767_000_000;

let counter = 0;
export function nextId(): string {
  counter += 1;
  return `3EB0FIXTURE${String(counter).padStart(6, '0')}`;
}

/**
 * A WAMessage as Baileys hands it over: encoded and decoded through the real protobuf, so int64
 * fields (timestamps, file lengths) arrive as Long objects, as they do from the wire.
 */
export function waMessage(
  message: proto.IMessage | null,
  options: {
    id?: string;
    fromMe?: boolean;
    remoteJid?: string;
    participant?: string;
    pushName?: string;
    seconds?: number;
    /** Baileys' WebMessageInfo status (a message the account sent; folded receipts). */
    status?: proto.WebMessageInfo.Status;
    /** The other addressing of remoteJid / participant (Baileys sets these beside the protobuf key). */
    remoteJidAlt?: string;
    participantAlt?: string;
  } = {},
): WAMessage {
  const info = proto.WebMessageInfo.fromObject({
    key: {
      remoteJid: options.remoteJid ?? PEER,
      fromMe: options.fromMe ?? false,
      id: options.id ?? nextId(),
      ...(options.participant ? { participant: options.participant } : {}),
    },
    messageTimestamp: options.seconds ?? SECONDS,
    ...(message ? { message } : {}),
    ...(options.pushName ? { pushName: options.pushName } : {}),
    ...(options.status !== undefined ? { status: options.status } : {}),
  });
  const decoded = proto.WebMessageInfo.decode(proto.WebMessageInfo.encode(info).finish()) as WAMessage;
  if (options.remoteJidAlt) decoded.key.remoteJidAlt = options.remoteJidAlt;
  if (options.participantAlt) decoded.key.participantAlt = options.participantAlt;
  return decoded;
}

/** Media fields as a sender fills them (the bytes live on the media host). */
export const mediaCommon = {
  url: 'https://127.0.0.1:1/mms/fixture',
  directPath: '/mms/fixture',
  mediaKey: new Uint8Array(32).fill(7),
  fileSha256: new Uint8Array(32).fill(1),
  fileEncSha256: new Uint8Array(32).fill(2),
};

/** The stack, queues and pipeline an inbound suite shares: set in `beforeAll`, stopped in `afterAll`. */
interface InboundStack {
  stack: TestStack;
  queues: Queues;
  pipeline: InboundPipeline;
  /** A fresh account id per test (`<prefix><n><now>`): the stack is shared, the data is not. */
  newAccount(): string;
  table(): ReturnType<typeof tableOf>;
}

/** Registers the hooks that start one test stack with an inbound pipeline for the calling file. */
export function useInboundStack(accountPrefix: string): InboundStack {
  let accountSeq = 0;
  const inbound = {
    newAccount() {
      accountSeq += 1;
      return `${accountPrefix}${accountSeq}${Date.now()}`;
    },
    table: () => tableOf(inbound.stack.config, inbound.stack.clients),
  } as InboundStack;
  beforeAll(async () => {
    inbound.stack = await startTestStack();
    inbound.queues = createQueues(inbound.stack.config, inbound.stack.clients, silentLogger);
    inbound.pipeline = createInboundPipeline({
      config: inbound.stack.config,
      clients: inbound.stack.clients,
      logger: silentLogger,
      queues: inbound.queues,
    });
  });
  afterAll(async () => {
    await inbound.stack?.stop();
  });
  return inbound;
}
