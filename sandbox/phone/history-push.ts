import { deflateSync } from 'node:zlib';
import { proto } from '@whiskeysockets/baileys';
import { lidJid, pnJid } from '../network/jids.js';
import type { Network } from '../network/network.js';
import type { Account, CompanionDevice } from '../network/model.js';
import { chatPushNames, historyChunks, onDemandChunk, uploadedHistoryNotification, type HistoryKind } from './history.js';

/** What the history push needs of the phones (phone.ts). */
interface PhoneChannel {
  /** Runs `work` on the phone's queue, in order with everything else it does with its sessions. */
  serial<T>(phone: Account, work: () => Promise<T>): Promise<T>;
  /** A peer message from device 0 to one of its companions. */
  send(phone: Account, companion: CompanionDevice, message: proto.IMessage): Promise<void>;
  /** What one of the phone's own companions sent device 0, decrypted (on the phone's queue). */
  decrypt(phone: Account, device: number, type: string, ciphertext: Buffer): Promise<proto.IMessage>;
}

/**
 * A phone's conversations sent to its companions: RECENT, then FULL when the companion asked for
 * it, after the bootstrap of a new link, chunk by chunk (phone/history.ts); a sync sent again on
 * request; and the answer to a companion's on-demand request.
 */
export class HistoryPush {
  constructor(
    private readonly network: Network,
    private readonly phones: PhoneChannel,
  ) {}

  /**
   * The history syncs a phone pushes to a newly linked companion: the initial bootstrap (empty
   * history and the PN<->LID mappings it knows; Baileys waits up to 20 s for it, chats.js:1067-1111)
   * and the push names (the account's own first, then those of the people it has chats with),
   * which Baileys reads only from a PUSH_NAME sync (Utils/history.js), then its conversations.
   * WhatsApp also gives the companion its own name through app-state sync (critical_block,
   * pushNameSetting), which the sandbox does not model (docs/sandbox-protocol.md).
   */
  sendBootstrap(phone: Account, companion: CompanionDevice, known: Account[]): Promise<void> {
    return this.phones.serial(phone, async () => {
      const { HistorySyncType } = proto.HistorySync;
      const bootstrap = inlineHistorySync(HistorySyncType.INITIAL_BOOTSTRAP, {
        conversations: [],
        phoneNumberToLidMappings: [phone, ...known].map((a) => ({ pnJid: pnJid(a.phone), lidJid: lidJid(a.lid) })),
      });
      const names = new Map(chatPushNames(phone).map((p) => [p.id, p]));
      for (const a of [phone, ...known]) names.set(pnJid(a.phone), { id: pnJid(a.phone), pushname: a.pushName });
      const pushNames = inlineHistorySync(HistorySyncType.PUSH_NAME, { pushnames: [...names.values()] });
      companion.bootstrapped = true;
      this.network.changed();
      for (const message of [bootstrap, pushNames]) await this.phones.send(phone, companion, message);
      this.sendSyncs(phone, companion);
    });
  }

  /**
   * The syncs after a link's bootstrap. Each chunk takes its own turn on the phone's queue: the
   * phone keeps answering in between, as a real phone goes on while it uploads its history.
   */
  private sendSyncs(phone: Account, companion: CompanionDevice): void {
    void this.send(phone, companion, 'recent')
      .then(() => (companion.fullSync ? this.send(phone, companion, 'full') : undefined))
      .catch((err: unknown) => this.network.logger.warn({ err, phone: phone.phone }, 'history sync failed'));
  }

  /** A sync to every linked companion again (POST /phones/:phone/history/push). */
  async push(phone: Account, kind: HistoryKind): Promise<void> {
    await Promise.all([...phone.devices.values()].map((companion) => this.send(phone, companion, kind)));
  }

  /**
   * A peer message from one of the phone's own companions: an on-demand history request
   * (PEER_DATA_OPERATION_REQUEST_MESSAGE, HISTORY_SYNC_ON_DEMAND) is answered with an ON_DEMAND
   * history sync (phone/history.ts `onDemandChunk`); other requests are not modelled.
   */
  answerPeer(phone: Account, device: number, requestId: string, type: string, ciphertext: Buffer): Promise<void> {
    return this.phones.serial(phone, async () => {
      const decoded = await this.phones.decrypt(phone, device, type, ciphertext);
      // What a companion sends its own devices comes wrapped as sent to a destination.
      const operation = (decoded.deviceSentMessage?.message ?? decoded).protocolMessage?.peerDataOperationRequestMessage;
      const request = operation?.historySyncOnDemandRequest;
      const companion = phone.devices.get(device);
      if (!request || !companion) return;
      const notification = await uploadedHistoryNotification(onDemandChunk(phone, request), this.network.media, requestId);
      await this.phones.send(phone, companion, notification);
    });
  }

  /** One sync (RECENT or FULL) to a companion, chunk by chunk. */
  private async send(phone: Account, companion: CompanionDevice, kind: HistoryKind): Promise<void> {
    for (const chunk of historyChunks(phone, kind)) {
      const notification = await uploadedHistoryNotification(chunk, this.network.media);
      await this.phones.serial(phone, () => this.phones.send(phone, companion, notification));
    }
  }
}

/** A history sync sent inline, as WhatsApp sends small ones (initialHistBootstrapInlinePayload). */
function inlineHistorySync(syncType: proto.HistorySync.HistorySyncType, history: Omit<proto.IHistorySync, 'syncType'>): proto.IMessage {
  const payload = proto.HistorySync.encode({ syncType, progress: 100, ...history }).finish();
  return {
    protocolMessage: {
      type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
      historySyncNotification: {
        syncType: syncType as unknown as proto.Message.HistorySyncType,
        initialHistBootstrapInlinePayload: deflateSync(payload),
        chunkOrder: 0,
        progress: 100,
      },
    },
  };
}
