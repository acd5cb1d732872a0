import { EventEmitter } from 'node:events';
import {
  addTransactionCapability,
  DEFAULT_CONNECTION_CONFIG,
  type BinaryNode,
  type SignalRepositoryWithLIDStore,
} from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { DecryptedPart } from '../../../connector/inbound/inbox.js';
import { durableDecryption } from '../../../connector/session/durable-decrypt.js';
import { memoryAuthState, type MemoryAuthState } from '../../sandbox/support/memory-auth.js';
import { injectSessionFromBundle } from '../../sandbox/support/pre-key-session.js';

/**
 * The wrapper around Baileys' own signal repository (libsignal, real keys, real ciphertexts):
 * a decryption resolves only once its plaintext is recorded, a failed record fails it, and the
 * record carries the stanza the ciphertext came in.
 */
const logger = pino({ level: 'silent' });
const RECEIVER = '15550001111@s.whatsapp.net';
const SENDER = '15550002222@s.whatsapp.net';
const GROUP = '120363000000000002@g.us';

interface Party {
  auth: MemoryAuthState;
  keys: ReturnType<typeof addTransactionCapability>;
}

function party(): Party {
  const auth = memoryAuthState();
  return { auth, keys: addTransactionCapability(auth.keys, logger, { maxCommitRetries: 1, delayBetweenTriesMs: 1 }) };
}

const repositoryOf = (p: Party): SignalRepositoryWithLIDStore =>
  DEFAULT_CONNECTION_CONFIG.makeSignalRepository({ creds: p.auth.creds, keys: p.keys }, logger);

/** A sender with a Signal session to the receiver, built from the receiver's pre-key bundle. */
async function senderTo(receiver: Party): Promise<SignalRepositoryWithLIDStore> {
  const sender = repositoryOf(party());
  await injectSessionFromBundle(sender, receiver.auth, RECEIVER);
  return sender;
}

/** The receiving side: the wrapped repository, and the emitter its stanzas arrive on. */
function receiverWith(receiver: Party, record: (part: DecryptedPart) => Promise<void>) {
  const durable = durableDecryption(record);
  const ws = new EventEmitter();
  durable.watch(ws);
  return { repository: durable.makeSignalRepository({ creds: receiver.auth.creds, keys: receiver.keys }, logger), ws };
}

const stanza = (id: string, attrs: Record<string, string>, children: BinaryNode[]): BinaryNode => ({
  tag: 'message',
  attrs: { id, t: '1767000000', ...attrs },
  content: children,
});

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('durable decryption', () => {
  it('a 1:1 message: decryptMessage resolves only after its plaintext, with its stanza, is recorded', async () => {
    const receiver = party();
    const sender = await senderTo(receiver);
    const { type, ciphertext } = await sender.encryptMessage({ jid: RECEIVER, data: Buffer.from('hello durable') });
    const recorded: DecryptedPart[] = [];
    const write = deferred();
    const { repository, ws } = receiverWith(receiver, (part) => {
      recorded.push(part);
      return write.promise;
    });
    ws.emit('CB:message', stanza('MSG1', { from: SENDER, notify: 'Bob' }, [{ tag: 'enc', attrs: { v: '2', type }, content: ciphertext }]));
    // The same message to another receiver, whose record is stored at once: the yardstick below.
    const yardstick = party();
    const toYardstick = await (await senderTo(yardstick)).encryptMessage({ jid: RECEIVER, data: Buffer.from('hello durable') });
    const other = receiverWith(yardstick, async () => undefined);
    other.ws.emit(
      'CB:message',
      stanza('MSG0', { from: SENDER }, [{ tag: 'enc', attrs: { v: '2', type: toYardstick.type }, content: toYardstick.ciphertext }]),
    );

    let decrypted: Uint8Array | undefined;
    const decryption = repository.decryptMessage({ jid: SENDER, type, ciphertext }).then((plaintext) => {
      decrypted = plaintext;
    });
    await expect.poll(() => recorded.length).toBe(1);
    // Keys committed before the record would lose the message to a crash between the two
    // writes: its redelivery could no longer be decrypted (the message key is used up).
    // The yardstick's decryption, started only now, runs to its end (record stored, keys
    // committed): had this one not waited for its record, it would have got as far.
    await other.repository.decryptMessage({ jid: SENDER, ...toYardstick });
    expect(receiver.auth.keyIds('session')).toEqual([]);
    expect(decrypted).toBeUndefined();

    write.resolve();
    await decryption;
    expect(receiver.auth.keyIds('session')).toHaveLength(1);
    expect(Buffer.from(decrypted!).toString()).toBe('hello durable');
    expect(recorded[0]).toMatchObject({ stanza: { id: 'MSG1', from: SENDER, notify: 'Bob' }, part: 0, encType: type });
    expect(Buffer.from(recorded[0]!.plaintext)).toEqual(Buffer.from(decrypted!));
  });

  it('a failed record fails the decryption: Baileys then asks for the message again instead of receipting it', async () => {
    const receiver = party();
    const sender = await senderTo(receiver);
    const { type, ciphertext } = await sender.encryptMessage({ jid: RECEIVER, data: Buffer.from('not durable') });
    const { repository, ws } = receiverWith(receiver, async () => {
      throw new Error('write-ahead store unavailable');
    });
    ws.emit('CB:message', stanza('MSG2', { from: SENDER }, [{ tag: 'enc', attrs: { v: '2', type }, content: ciphertext }]));
    await expect(repository.decryptMessage({ jid: SENDER, type, ciphertext })).rejects.toThrow('write-ahead store unavailable');
    // Nothing of the decryption is committed, so the message decrypts again when it comes back.
    expect(receiver.auth.keyIds('session')).toEqual([]);
    expect(receiver.auth.keyIds('pre-key')).toEqual(['1']);
  });

  it('a message of an established session whose record failed decrypts again when WhatsApp delivers it again', async () => {
    const receiver = party();
    const sender = await senderTo(receiver);
    let storeUp = true;
    const recorded: string[] = [];
    const { repository, ws } = receiverWith(receiver, async (part) => {
      if (!storeUp) throw new Error('write-ahead store unavailable');
      recorded.push(String(part.stanza.id));
    });
    const deliver = async (id: string, message: { type: 'pkmsg' | 'msg'; ciphertext: Uint8Array }) => {
      // Each delivery is a fresh stanza, as a redelivery from WhatsApp is.
      const ciphertext = Buffer.from(message.ciphertext);
      ws.emit('CB:message', stanza(id, { from: SENDER }, [{ tag: 'enc', attrs: { v: '2', type: message.type }, content: ciphertext }]));
      return Buffer.from(await repository.decryptMessage({ jid: SENDER, type: message.type, ciphertext })).toString();
    };
    const first = await sender.encryptMessage({ jid: RECEIVER, data: Buffer.from('one') });
    expect(await deliver('M1', first)).toBe('one');
    // The receiver answers, so the sender's next message rides the established ratchet ('msg').
    const reply = await repository.encryptMessage({ jid: SENDER, data: Buffer.from('ack') });
    await sender.decryptMessage({ jid: RECEIVER, type: reply.type, ciphertext: reply.ciphertext });
    const second = await sender.encryptMessage({ jid: RECEIVER, data: Buffer.from('two') });
    expect(second.type).toBe('msg');

    storeUp = false;
    await expect(deliver('M2', second)).rejects.toThrow('write-ahead store unavailable');
    storeUp = true;
    // With the keys of the failed decryption committed, this failed: the message key was used up.
    expect(await deliver('M2', second)).toBe('two');
    expect(recorded).toEqual(['M1', 'M2']);
  });

  it('a group message: the sender-key part is recorded with its position in the stanza', async () => {
    const receiver = party();
    const senderParty = party();
    const sender = repositoryOf(senderParty);
    const { ciphertext, senderKeyDistributionMessage } = await sender.encryptGroupMessage({
      group: GROUP,
      meId: SENDER,
      data: Buffer.from('hello group'),
    });
    const recorded: DecryptedPart[] = [];
    const { repository, ws } = receiverWith(receiver, async (part) => {
      recorded.push(part);
    });
    await repository.processSenderKeyDistributionMessage({
      authorJid: SENDER,
      item: { groupId: GROUP, axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage },
    });
    ws.emit(
      'CB:message',
      stanza('GRP1', { from: GROUP, participant: SENDER }, [
        { tag: 'enc', attrs: { v: '2', type: 'pkmsg' }, content: new Uint8Array([9, 9, 9]) },
        { tag: 'enc', attrs: { v: '2', type: 'skmsg' }, content: ciphertext },
      ]),
    );

    const plaintext = await repository.decryptGroupMessage({ group: GROUP, authorJid: SENDER, msg: ciphertext });

    expect(Buffer.from(plaintext).toString()).toBe('hello group');
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ stanza: { id: 'GRP1', from: GROUP, participant: SENDER }, part: 1, encType: 'skmsg' });
  });
});
