import { z } from 'zod';

/**
 * One `POST /accounts/:accountId/pairing-code` in flight, written by the function and finished by
 * the connector (core/store/pairing-codes.ts). `pending`: not taken yet. `requesting`: a
 * connector took it and is asking WhatsApp. `issued`: the code is here. `already_connected`:
 * the account turned out to be linked. `failed`: no code, `reason` says why.
 */
const pairingCodeRequestStatusSchema = z.enum(['pending', 'requesting', 'issued', 'already_connected', 'failed']);
export type PairingCodeRequestStatus = z.infer<typeof pairingCodeRequestStatusSchema>;

export const pairingCodeRequestSchema = z.object({
  commandId: z.string(),
  status: pairingCodeRequestStatusSchema,
  /** Unix ms: the connector may take the request only before it (the API answers by then). */
  deadline: z.number().int(),
  code: z.string().optional(),
  /** Unix ms until which the code can be entered on the phone. */
  codeExpiresAt: z.number().int().optional(),
  reason: z.string().optional(),
  /** Epoch seconds: DynamoDB TTL removes the record (the table's TTL attribute). */
  expiresAt: z.number().int(),
});
export type PairingCodeRequest = z.infer<typeof pairingCodeRequestSchema>;

const FINAL: ReadonlySet<PairingCodeRequestStatus> = new Set(['issued', 'already_connected', 'failed']);
export const isFinalPairingCodeStatus = (status: PairingCodeRequestStatus) => FINAL.has(status);
