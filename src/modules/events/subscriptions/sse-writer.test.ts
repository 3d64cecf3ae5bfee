import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { SseWriter } from './sse-writer.js';

/** Enough of a response for the writer: a socket that takes `accepts` bytes, then buffers the rest until flushed. */
function fakeResponse(accepts: number, highWaterMark = 100) {
  const res = Object.assign(new EventEmitter(), {
    writableLength: 0,
    writableEnded: false,
    destroyed: false,
    taken: 0,
    write(chunk: string) {
      const room = Math.max(0, accepts - res.taken);
      const now = Math.min(room, chunk.length);
      res.taken += now;
      res.writableLength += chunk.length - now;
      return res.writableLength < highWaterMark;
    },
    destroy() {
      res.destroyed = true;
      res.writableLength = 0;
      res.emit('close');
    },
    /** The client read everything: the buffer empties and drain is told. */
    flush() {
      res.writableLength = 0;
      res.emit('drain');
    },
  });
  return res;
}

describe('SseWriter', () => {
  it('answers full past the high-water mark, and drained() resolves on drain', async () => {
    const res = fakeResponse(0);
    const writer = new SseWriter(res as unknown as Response, 1000);
    expect(writer.write('x'.repeat(50))).toBe('sent');
    expect(writer.write('x'.repeat(60))).toBe('full');
    let drained = false;
    const waiting = writer.drained().then(() => (drained = true));
    await Promise.resolve();
    expect(drained).toBe(false);
    res.flush();
    await waiting;
    expect([drained, res.listenerCount('drain'), res.listenerCount('close')]).toEqual([true, 0, 0]);
  });

  it('cuts the stream once its unsent bytes pass the ceiling, and writes nothing after', () => {
    const res = fakeResponse(0);
    const writer = new SseWriter(res as unknown as Response, 250);
    expect(writer.write('x'.repeat(200))).toBe('full');
    expect(writer.write('x'.repeat(100))).toBe('gone');
    expect([writer.cut, res.destroyed, writer.open]).toEqual([true, true, false]);
    expect(writer.write('x')).toBe('gone');
  });

  it('never cuts one message alone for its size, and drained() resolves at once on a closed stream', async () => {
    const res = fakeResponse(0);
    const writer = new SseWriter(res as unknown as Response, 250);
    expect(writer.write('x'.repeat(400))).toBe('full');
    expect(writer.cut).toBe(false);
    res.destroy();
    await writer.drained();
    expect(writer.write('x')).toBe('gone');
    expect(writer.cut).toBe(false);
  });
});
