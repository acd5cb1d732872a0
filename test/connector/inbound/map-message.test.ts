import { proto } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { mapInboundMessage } from '../../../connector/inbound/map-message.js';
import { GROUP, mediaCommon, PEER, SECONDS, SELF, SELF_JID, waMessage } from './fixtures.js';

const map = (msg: ReturnType<typeof waMessage>) => mapInboundMessage(msg, SELF_JID);

function expectMessage(action: ReturnType<typeof map>) {
  if (action.kind !== 'message') throw new Error(`expected a message, got ${action.kind}`);
  return action;
}

describe('mapInboundMessage: text', () => {
  it('maps a conversation with a Long timestamp to a text message in milliseconds', () => {
    const msg = waMessage({ conversation: 'hello 👋\nthere' }, { id: 'ABC123' });
    expect(typeof msg.messageTimestamp).toBe('object');
    const { message, media } = expectMessage(map(msg));
    expect(message).toEqual({
      messageId: 'ABC123',
      from: PEER,
      chatId: PEER,
      timestamp: SECONDS * 1000,
      fromMe: false,
      type: 'text',
      text: 'hello 👋\nthere',
    });
    expect(media).toBeUndefined();
  });

  it('accepts a plain-number timestamp too', () => {
    const msg = { ...waMessage({ conversation: 'x' }), messageTimestamp: 1_700_000_000 };
    expect(expectMessage(map(msg)).message.timestamp).toBe(1_700_000_000_000);
  });

  it('reads extendedTextMessage text and the quoted message id of a reply', () => {
    const msg = waMessage({
      extendedTextMessage: { text: 'a reply', contextInfo: { stanzaId: 'QUOTED1', participant: PEER } },
    });
    const { message } = expectMessage(map(msg));
    expect(message).toMatchObject({ type: 'text', text: 'a reply', quotedMessageId: 'QUOTED1' });
  });

  it('gives messages sent from the phone (fromMe) the account as sender', () => {
    const { message } = expectMessage(map(waMessage({ conversation: 'mine' }, { fromMe: true })));
    expect(message).toMatchObject({ fromMe: true, from: SELF, chatId: PEER });
    expect(message.participant).toBeUndefined();
  });

  it('uses the participant as sender in a group', () => {
    const msg = waMessage({ conversation: 'hi all' }, { remoteJid: GROUP, participant: '15550003333:2@s.whatsapp.net' });
    expect(expectMessage(map(msg)).message).toMatchObject({
      chatId: GROUP,
      from: '15550003333@s.whatsapp.net',
      participant: '15550003333@s.whatsapp.net',
    });
  });

  it('unwraps ephemeral and view-once envelopes', () => {
    const msg = waMessage({ ephemeralMessage: { message: { extendedTextMessage: { text: 'vanishing' } } } });
    expect(expectMessage(map(msg)).message).toMatchObject({ type: 'text', text: 'vanishing' });
  });
});

describe('mapInboundMessage: media', () => {
  it('maps an image with caption, mimetype and file length', () => {
    const msg = waMessage({ imageMessage: { ...mediaCommon, mimetype: 'image/png', caption: 'look', fileLength: 12345 } });
    const action = expectMessage(map(msg));
    expect(action.message).toMatchObject({ type: 'image', hasMedia: true, caption: 'look', mimetype: 'image/png', fileLength: 12345 });
    expect(action.message.text).toBeUndefined();
    expect(action.media).toEqual({ mimetype: 'image/png', fileLength: 12345 });
  });

  it('maps a voice note with seconds and ptt', () => {
    const msg = waMessage({ audioMessage: { ...mediaCommon, mimetype: 'audio/ogg; codecs=opus', seconds: 7, ptt: true, fileLength: 999 } });
    expect(expectMessage(map(msg)).message).toMatchObject({ type: 'audio', ptt: true, seconds: 7, mimetype: 'audio/ogg; codecs=opus' });
  });

  it('maps a video with caption and seconds', () => {
    const msg = waMessage({ videoMessage: { ...mediaCommon, mimetype: 'video/mp4', seconds: 3, caption: 'clip' } });
    expect(expectMessage(map(msg)).message).toMatchObject({ type: 'video', seconds: 3, caption: 'clip', hasMedia: true });
  });

  it('maps a document (also inside documentWithCaptionMessage) keeping fileName', () => {
    const plain = waMessage({ documentMessage: { ...mediaCommon, mimetype: 'application/pdf', fileName: 'a.pdf' } });
    const action = expectMessage(map(plain));
    expect(action.message).toMatchObject({ type: 'document', fileName: 'a.pdf', mimetype: 'application/pdf' });
    expect(action.media).toMatchObject({ fileName: 'a.pdf', mimetype: 'application/pdf' });

    const wrapped = waMessage({
      documentWithCaptionMessage: {
        message: { documentMessage: { ...mediaCommon, mimetype: 'text/plain', fileName: 'n.txt', caption: 'notes' } },
      },
    });
    expect(expectMessage(map(wrapped)).message).toMatchObject({ type: 'document', fileName: 'n.txt', caption: 'notes' });
  });

  it('maps a sticker, defaulting its mimetype to webp', () => {
    const action = expectMessage(map(waMessage({ stickerMessage: { ...mediaCommon } })));
    expect(action.message).toMatchObject({ type: 'sticker', hasMedia: true });
    expect(action.media?.mimetype).toBe('image/webp');
  });
});

describe('mapInboundMessage: other kinds', () => {
  it('maps a location and a contact with a readable text', () => {
    const location = expectMessage(map(waMessage({ locationMessage: { degreesLatitude: 52.5, degreesLongitude: 13.4, name: 'Berlin' } })));
    expect(location.message).toMatchObject({ type: 'location', text: 'Berlin (52.5,13.4)' });
    const contact = expectMessage(map(waMessage({ contactMessage: { displayName: 'Ada', vcard: 'BEGIN:VCARD' } })));
    expect(contact.message).toMatchObject({ type: 'contact', text: 'Ada' });
  });

  it('maps content it does not know as unknown, keeping the row', () => {
    const action = expectMessage(map(waMessage({ groupInviteMessage: { groupName: 'team' } })));
    expect(action.message.type).toBe('unknown');
  });

  it('keeps the fields of a location, the vCards of contacts, and a poll with its options and secret', () => {
    const location = expectMessage(
      map(waMessage({ locationMessage: { degreesLatitude: 52.5, degreesLongitude: 13.4, name: 'Berlin', address: 'Mitte' } })),
    );
    expect(location.message).toMatchObject({ latitude: 52.5, longitude: 13.4, name: 'Berlin', address: 'Mitte' });
    const contacts = expectMessage(
      map(
        waMessage({
          contactsArrayMessage: {
            contacts: [
              { displayName: 'A', vcard: 'V1' },
              { displayName: 'B', vcard: 'V2' },
            ],
          },
        }),
      ),
    );
    expect(contacts.message).toMatchObject({ type: 'contact', text: 'A, B', vcards: ['V1', 'V2'] });
    const secret = new Uint8Array(32).fill(7);
    const poll = map(
      waMessage({
        pollCreationMessageV3: { name: 'lunch?', options: [{ optionName: 'Pizza' }, { optionName: 'Soup' }], selectableOptionsCount: 0 },
        messageContextInfo: { messageSecret: secret },
      }),
    );
    expect(poll).toMatchObject({
      kind: 'message',
      message: { type: 'poll', text: 'lunch?', pollOptions: ['Pizza', 'Soup'], selectableCount: 0 },
    });
    expect(poll.kind === 'message' && poll.pollSecret && Buffer.from(poll.pollSecret).equals(Buffer.from(secret))).toBe(true);
  });

  it('maps a poll vote to the poll it names, with the JIDs the voter may have used', () => {
    const action = map(
      waMessage({
        pollUpdateMessage: {
          pollCreationMessageKey: { remoteJid: 'x@s.whatsapp.net', id: 'POLL1' },
          vote: { encPayload: new Uint8Array([1]), encIv: new Uint8Array([2]) },
        },
      }),
    );
    expect(action).toMatchObject({ kind: 'poll_vote', pollMessageId: 'POLL1' });
    if (action.kind === 'poll_vote') expect(action.voterJids).toContain(action.from);
  });
});

describe('mapInboundMessage: updates and skips', () => {
  it('recognises a reaction as an update of the target message', () => {
    const msg = waMessage({
      reactionMessage: { key: { id: 'TARGET1', remoteJid: PEER, fromMe: true }, text: '👍', senderTimestampMs: 1_767_000_000_123 },
    });
    expect(map(msg)).toEqual({
      kind: 'reaction',
      chatId: PEER,
      from: PEER,
      fromMe: false,
      updateId: msg.key.id,
      timestamp: 1_767_000_000_123,
      targetMessageId: 'TARGET1',
      reaction: { from: PEER, emoji: '👍', timestamp: 1_767_000_000_123 },
    });
  });

  it('recognises a removed reaction (empty text)', () => {
    const msg = waMessage({ reactionMessage: { key: { id: 'TARGET1', remoteJid: PEER }, text: '' } });
    const action = map(msg);
    expect(action).toMatchObject({ kind: 'reaction', reaction: { emoji: '' } });
  });

  it('recognises a REVOKE as deletion of the target message', () => {
    const msg = waMessage({ protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE, key: { id: 'GONE1', remoteJid: PEER } } });
    expect(map(msg)).toEqual({
      kind: 'revoke',
      chatId: PEER,
      from: PEER,
      fromMe: false,
      updateId: msg.key.id,
      timestamp: SECONDS * 1000,
      targetMessageId: 'GONE1',
    });
  });

  it('recognises an edit (MESSAGE_EDIT) as new text of the target message', () => {
    const msg = waMessage({
      protocolMessage: {
        type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
        key: { id: 'EDITED1', remoteJid: PEER },
        editedMessage: { conversation: 'fixed typo' },
      },
    });
    expect(map(msg)).toEqual({
      kind: 'edit',
      chatId: PEER,
      from: PEER,
      fromMe: false,
      updateId: msg.key.id,
      timestamp: SECONDS * 1000,
      targetMessageId: 'EDITED1',
      text: 'fixed typo',
    });
  });

  it('skips other protocol messages, status broadcasts and stubs without content', () => {
    const history = waMessage({ protocolMessage: { type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION } });
    expect(map(history).kind).toBe('skip');
    expect(map(waMessage({ conversation: 'story' }, { remoteJid: 'status@broadcast', participant: PEER })).kind).toBe('skip');
    expect(map(waMessage(null)).kind).toBe('skip');
    expect(map(waMessage({ senderKeyDistributionMessage: { groupId: GROUP } })).kind).toBe('skip');
  });
});
