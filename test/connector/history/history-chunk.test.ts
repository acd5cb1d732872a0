import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { planChunk, settingImports, syncKindOf } from '../../../connector/history/history-chunk.js';
import { historyMediaPut } from '../../../core/store/history-media.js';

const SELF = '15550000001@s.whatsapp.net';
const PERSON = '15550000002@s.whatsapp.net';
const { HistorySyncType } = proto.HistorySync;

const message = (id: string, fromMe: boolean, seconds: number, content: proto.IMessage, pushName?: string): WAMessage => ({
  key: { remoteJid: PERSON, fromMe, id },
  message: content,
  messageTimestamp: seconds,
  ...(pushName ? { pushName } : {}),
  ...(fromMe ? { status: proto.WebMessageInfo.Status.READ } : {}),
});

describe('history chunks: which syncs are imported', () => {
  it('none imports no sync of the phone, recent all but FULL, full all; on demand always', () => {
    const table = (['none', 'recent', 'full'] as const).map((mode) =>
      (['bootstrap', 'recent', 'full', 'on_demand'] as const).map((kind) => settingImports(mode, kind)),
    );
    expect(table).toEqual([
      [false, false, false, true],
      [true, true, false, true],
      [true, true, true, true],
    ]);
  });

  it('kinds by sync type; push names and the rest are not conversations', () => {
    expect(syncKindOf({ syncType: HistorySyncType.RECENT as unknown as proto.Message.HistorySyncType })).toBe('recent');
    expect(syncKindOf({ syncType: HistorySyncType.FULL as unknown as proto.Message.HistorySyncType })).toBe('full');
    expect(syncKindOf({ syncType: HistorySyncType.ON_DEMAND as unknown as proto.Message.HistorySyncType })).toBe('on_demand');
    expect(syncKindOf({})).toBe('bootstrap');
    expect(syncKindOf({ syncType: HistorySyncType.PUSH_NAME as unknown as proto.Message.HistorySyncType })).toBeUndefined();
  });
});

describe('history chunks: what a chunk becomes', () => {
  const image: proto.IMessage = {
    imageMessage: { url: 'https://mmg.example/m/1', directPath: '/m/1', mediaKey: new Uint8Array(32), mimetype: 'image/jpeg' },
  };
  const history = {
    chats: [{ id: PERSON, unreadCount: 3, conversationTimestamp: 1_700_000_100 }],
    messages: [
      message('3EB0AAA1', false, 1_700_000_000, { conversation: 'hello' }, 'Dan'),
      message('3EB0AAA2', true, 1_700_000_050, { conversation: 'hi' }),
      message('3EB0AAA3', false, 1_700_000_100, image, 'Dan'),
      message('bad id!', false, 1_700_000_100, { conversation: 'dropped' }),
      message('3EB0AAA4', false, 1_700_000_100, { reactionMessage: { key: { id: '3EB0AAA1' }, text: '👍' } }),
    ],
  };
  const names = (saved?: string) => ({ savedNameOf: () => saved });

  it('messages mapped like live ones and marked historical; their own sends with their status; bad ids and reactions left out', () => {
    const plan = planChunk(history, SELF, names());
    expect(plan.messages.map((m) => [m.messageId, m.type, m.fromMe, m.historical])).toEqual([
      ['3EB0AAA1', 'text', false, true],
      ['3EB0AAA2', 'text', true, true],
      ['3EB0AAA3', 'image', false, true],
    ]);
    expect(plan.messages[1]).toMatchObject({ from: SELF, status: 'read', timestamp: 1_700_000_050_000 });
  });

  it('media: the message content kept to find the file later', () => {
    const plan = planChunk(history, SELF, names());
    expect(plan.media.map((m) => m.messageId)).toEqual(['3EB0AAA3']);
    expect(proto.Message.decode(plan.media[0]!.content).imageMessage?.directPath).toBe('/m/1');
    // Kept as long as its message's row (MESSAGE_RETENTION_DAYS), then of no use.
    const media = plan.media[0]!;
    const row = plan.messages.find((m) => m.messageId === media.messageId)!;
    expect(media.timestamp).toBe(row.timestamp);
    const kept = historyMediaPut('acct', media, media.content, 30);
    expect('put' in kept && kept.put.expiresAt).toBe(Math.ceil((row.timestamp + 30 * 86_400_000) / 1000));
    const forever = historyMediaPut('acct', media, media.content, undefined);
    expect('put' in forever && 'expiresAt' in forever.put).toBe(false);
  });

  it("chats: the phone's unread count as a floor, its time, named by the saved name, else a push name seen", () => {
    expect(planChunk(history, SELF, names()).chats).toEqual([
      { chatId: PERSON, change: { at: 1_700_000_100_000, unreadAtLeast: 3, name: 'Dan' } },
    ]);
    expect(planChunk(history, SELF, names('Dan Smith')).chats[0]?.change.name).toBe('Dan Smith');
    const saved = planChunk({ ...history, chats: [{ ...history.chats[0]!, name: 'Daniel' }] }, SELF, names('Dan Smith'));
    expect(saved.chats[0]?.change.name).toBe('Daniel');
  });

  it('ignoreGroups leaves out group chats and their messages, as it leaves out live ones', () => {
    const group = '120363000000000001@g.us';
    const inGroup = {
      ...message('3EB0BBB1', false, 1_700_000_000, { conversation: 'in a group' }),
      key: { remoteJid: group, fromMe: false, id: '3EB0BBB1', participant: PERSON },
    };
    const withGroup = {
      chats: [...history.chats, { id: group, conversationTimestamp: 1_700_000_000, name: 'Team' }],
      messages: [...history.messages, inGroup],
    };
    const kept = planChunk(withGroup, SELF, names());
    expect(kept.chats.map((c) => c.chatId)).toEqual([PERSON, group]);
    expect(kept.messages.map((m) => m.messageId)).toContain('3EB0BBB1');
    const ignored = planChunk(withGroup, SELF, names(), { ignoreGroups: true });
    expect(ignored.chats.map((c) => c.chatId)).toEqual([PERSON]);
    expect(ignored.messages.map((m) => m.messageId)).not.toContain('3EB0BBB1');
  });

  it('a chat without a time takes its newest message; a JID that is no chat is left out', () => {
    const plan = planChunk({ chats: [{ id: PERSON }, { id: 'status@broadcast' }], messages: history.messages }, SELF, names());
    expect(plan.chats).toEqual([{ chatId: PERSON, change: { at: 1_700_000_100_000, unreadAtLeast: 0, name: 'Dan' } }]);
  });
});
