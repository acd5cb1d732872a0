import { describe, expect, it } from 'vitest';
import { waveformFromPcm } from '../../../connector/media/waveform.js';

describe('waveformFromPcm', () => {
  it('draws 64 bars scaled to 100: loud first half, silent second half', () => {
    const samples = 64 * 100;
    const pcm = Buffer.alloc(samples * 2);
    for (let i = 0; i < samples / 2; i += 1) pcm.writeInt16LE(i % 2 === 0 ? 8000 : -8000, i * 2);
    const bars = waveformFromPcm(pcm);
    expect(bars).toHaveLength(64);
    expect([...bars.slice(0, 32)].every((bar) => bar === 100)).toBe(true);
    expect([...bars.slice(32)].every((bar) => bar === 0)).toBe(true);
  });

  it('gives flat zero bars for silence or no audio', () => {
    expect([...waveformFromPcm(Buffer.alloc(2000))].every((bar) => bar === 0)).toBe(true);
    expect(waveformFromPcm(Buffer.alloc(0))).toHaveLength(64);
  });
});
