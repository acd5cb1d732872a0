import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { getMediaKeys } from '@whiskeysockets/baileys';

type MediaType = Parameters<typeof getMediaKeys>[1];

/** An encrypted media blob and the fields a message carries to find and check it. */
export interface EncryptedMedia {
  blob: Buffer;
  mediaKey: Buffer;
  fileSha256: Buffer;
  fileEncSha256: Buffer;
  fileLength: number;
}

/**
 * Encrypts `plain` as WhatsApp clients encrypt media before uploading it (Baileys
 * Utils/messages-media.js `encryptedStream`): keys expanded from a random media key for the media
 * type, AES-256-CBC, then the first 10 bytes of an HMAC-SHA256 over IV and ciphertext appended.
 * History sync blobs are encrypted the same way with the type 'md-msg-hist'.
 */
export async function encryptMedia(plain: Buffer, type: MediaType): Promise<EncryptedMedia> {
  const mediaKey = randomBytes(32);
  const { cipherKey, iv, macKey } = await getMediaKeys(mediaKey, type);
  if (!macKey) throw new Error('no MAC key expanded from the media key');
  const aes = createCipheriv('aes-256-cbc', cipherKey, iv);
  const encrypted = Buffer.concat([aes.update(plain), aes.final()]);
  const mac = createHmac('sha256', macKey).update(iv).update(encrypted).digest().subarray(0, 10);
  const blob = Buffer.concat([encrypted, mac]);
  return {
    blob,
    mediaKey,
    fileSha256: createHash('sha256').update(plain).digest(),
    fileEncSha256: createHash('sha256').update(blob).digest(),
    fileLength: plain.length,
  };
}
