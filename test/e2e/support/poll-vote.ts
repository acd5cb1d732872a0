import { createHash, randomBytes } from 'node:crypto';
import { aesEncryptGCM, hmacSign, proto, type WAMessage } from '@whiskeysockets/baileys';

/**
 * A vote as a phone builds it: the chosen options' SHA-256, AES-GCM under a key from the poll's
 * secret, the poll's id, the creator's and the voter's JID (connector/inbound/poll-votes.ts reads it).
 */
export function voteMessage(poll: WAMessage, creatorJid: string, voterJid: string, options: string[]): proto.IMessage {
  const secret = poll.message?.messageContextInfo?.messageSecret;
  const pollMsgId = poll.key.id;
  if (!secret || !pollMsgId) throw new Error('the poll has no secret');
  const sign = Buffer.concat([
    Buffer.from(pollMsgId),
    Buffer.from(creatorJid),
    Buffer.from(voterJid),
    Buffer.from('Poll Vote'),
    Buffer.from([1]),
  ]);
  const key = hmacSign(sign, hmacSign(secret, new Uint8Array(32), 'sha256'), 'sha256');
  const iv = randomBytes(12);
  const plain = proto.Message.PollVoteMessage.encode({
    selectedOptions: options.map((o) => createHash('sha256').update(o).digest()),
  }).finish();
  const encPayload = aesEncryptGCM(plain, key, iv, Buffer.from(`${pollMsgId}\u0000${voterJid}`));
  return {
    pollUpdateMessage: {
      pollCreationMessageKey: { remoteJid: creatorJid, fromMe: false, id: pollMsgId },
      vote: { encPayload, encIv: iv },
      senderTimestampMs: Date.now(),
    },
  };
}
