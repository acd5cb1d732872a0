import type { GroupMetadata, WASocket } from '@whiskeysockets/baileys';
import type { GroupMetadataCache } from '../session/group-metadata.js';
import { apiJid, type GroupDetail, type GroupOperation, type GroupRefusal, type GroupResult } from '../../core/schemas/group.js';

/** Invite links are this prefix and the code (what WhatsApp shows under "Invite via link"). */
const INVITE_URL_PREFIX = 'https://chat.whatsapp.com/';

/** WhatsApp's answer to a group query that said no (the iq error Baileys throws as a Boom). */
export class GroupRefusedError extends Error {
  override name = 'GroupRefusedError';
  constructor(
    readonly refusal: GroupRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** iq error codes of `w:g2` queries (docs/sandbox-protocol.md, Groups) and what they mean to the API. */
const REFUSALS: Record<number, GroupRefusal> = {
  404: 'not_found',
  403: 'not_member',
  401: 'not_admin',
  400: 'bad_request',
  406: 'bad_request',
};

/**
 * A refusal when `error` is WhatsApp's iq error, else undefined. Baileys' query throws a Boom
 * with the iq error's code as `data` (WABinary assertNodeErrorFree); its metadata parser puts
 * it in the status code instead.
 */
export function refusalOf(error: unknown): GroupRefusedError | undefined {
  const boom = error as { data?: unknown; output?: { statusCode?: unknown } } | null;
  const code = typeof boom?.data === 'number' ? boom.data : boom?.output?.statusCode;
  const refusal = typeof code === 'number' ? REFUSALS[code] : undefined;
  return refusal ? new GroupRefusedError(refusal, error instanceof Error ? error.message : refusal) : undefined;
}

const isoOf = (seconds: number | undefined) => (seconds && Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : undefined);

function remembered(groups: GroupMetadataCache, meta: GroupMetadata): GroupMetadata {
  groups.remember(meta);
  return meta;
}

function detailOf(meta: GroupMetadata): GroupDetail {
  const owner = meta.owner ? apiJid(meta.owner, meta.ownerPn) : undefined;
  return {
    groupId: meta.id,
    subject: meta.subject,
    ...(meta.desc ? { description: meta.desc } : {}),
    ...(owner ? { owner } : {}),
    participants: meta.participants.map((p) => ({ jid: apiJid(p.id, p.phoneNumber), admin: p.admin ?? null })),
  };
}

/**
 * Runs one group operation on the account's live socket and shapes WhatsApp's answer for the API.
 * Metadata it gets is kept for sends; a group whose participants or subject it changes, or that
 * it leaves, is asked for again on the next send.
 */
export async function runGroupOperation(sock: WASocket, operation: GroupOperation, known: GroupMetadataCache): Promise<GroupResult> {
  switch (operation.op) {
    case 'list': {
      const all = await sock.groupFetchAllParticipating();
      const groups = Object.values(all)
        .sort((a, b) => (b.creation ?? 0) - (a.creation ?? 0))
        .map((meta) => {
          const owner = meta.owner ? apiJid(meta.owner, meta.ownerPn) : undefined;
          const createdAt = isoOf(meta.creation);
          return {
            groupId: meta.id,
            subject: meta.subject,
            size: meta.size ?? meta.participants.length,
            ...(owner ? { owner } : {}),
            ...(createdAt ? { createdAt } : {}),
          };
        });
      return { groups };
    }
    case 'create':
      return { group: detailOf(remembered(known, await sock.groupCreate(operation.subject, operation.participants))) };
    case 'metadata':
      return { group: detailOf(remembered(known, await sock.groupMetadata(operation.groupId))) };
    case 'participants': {
      const results = await sock.groupParticipantsUpdate(operation.groupId, operation.participants, operation.action);
      known.forget(operation.groupId);
      return { results: results.map((r) => ({ jid: apiJid(r.jid ?? ''), status: Number(r.status) || 0 })) };
    }
    case 'update':
      if (operation.subject !== undefined) await sock.groupUpdateSubject(operation.groupId, operation.subject);
      // An empty description removes it (Baileys sends `delete="true"`).
      if (operation.description !== undefined) await sock.groupUpdateDescription(operation.groupId, operation.description || undefined);
      known.forget(operation.groupId);
      return {};
    case 'invite': {
      const code = await sock.groupInviteCode(operation.groupId);
      if (!code) throw new Error('WhatsApp gave no invite code');
      return { code, url: `${INVITE_URL_PREFIX}${code}` };
    }
    case 'leave':
      known.forget(operation.groupId);
      await sock.groupLeave(operation.groupId);
      return {};
  }
}
