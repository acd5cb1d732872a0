/**
 * WebSocket payloads carry frames of a 3-byte big-endian length plus body. The client's very
 * first payload is prefixed with the intro header ('W','A',6,3), or with an 'ED' routing
 * header followed by it (Utils/noise-handler.js:50-62,168-184). The server sends no intro.
 */
const MAX_FRAME_BYTES = 0xffffff;

class FrameError extends Error {
  override name = 'FrameError';
}

export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);
  private introSeen = false;

  /** Appends received bytes and returns every complete frame. Throws FrameError on a bad intro. */
  push(data: Buffer): Buffer[] {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, data]) : data;
    if (!this.introSeen) {
      const skip = introLength(this.buffered);
      if (skip === undefined) return [];
      this.buffered = this.buffered.subarray(skip);
      this.introSeen = true;
    }
    const frames: Buffer[] = [];
    while (this.buffered.length >= 3) {
      const size = (this.buffered[0]! << 16) | (this.buffered[1]! << 8) | this.buffered[2]!;
      if (this.buffered.length < size + 3) break;
      frames.push(this.buffered.subarray(3, size + 3));
      this.buffered = this.buffered.subarray(size + 3);
    }
    return frames;
  }
}

/** Length of the intro at the start of `buf`, undefined while incomplete. */
function introLength(buf: Buffer): number | undefined {
  if (buf.length < 4) return undefined;
  if (buf[0] === 0x57 && buf[1] === 0x41) return 4;
  if (buf[0] === 0x45 && buf[1] === 0x44) {
    if (buf.length < 7) return undefined;
    const routingLength = (buf[4]! << 16) | buf.readUInt16BE(5);
    if (buf.length < 7 + routingLength + 4) return undefined;
    return 7 + routingLength + 4;
  }
  throw new FrameError('bad intro header');
}

export function encodeFrame(payload: Uint8Array): Buffer {
  if (payload.length > MAX_FRAME_BYTES) throw new FrameError('frame too large');
  const frame = Buffer.allocUnsafe(3 + payload.length);
  frame[0] = (payload.length >>> 16) & 0xff;
  frame[1] = (payload.length >>> 8) & 0xff;
  frame[2] = payload.length & 0xff;
  frame.set(payload, 3);
  return frame;
}
