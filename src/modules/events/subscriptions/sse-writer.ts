import type { Response } from 'express';

/** What became of a write: sent (or buffered under the high-water mark), `full` (wait for drained()), or the stream is `gone` (closed, or cut here). */
export type WriteOutcome = 'sent' | 'full' | 'gone';

/**
 * Writes an SSE answer with a ceiling on what it holds unsent: once the bytes written and not yet
 * taken by the socket (`res.writableLength`) pass `maxBufferedBytes` after a write, the stream is
 * cut (destroyed, its buffer freed) and the client resumes with Last-Event-ID. One message alone is
 * never cut for its size: the ceiling counts what was already waiting.
 */
export class SseWriter {
  /** Whether this writer cut the stream for its unsent bytes. */
  cut = false;

  constructor(
    private readonly res: Response,
    private readonly maxBufferedBytes: number,
  ) {}

  get open(): boolean {
    return !this.res.writableEnded && !this.res.destroyed;
  }

  write(chunk: string): WriteOutcome {
    if (!this.open) return 'gone';
    const waiting = this.res.writableLength;
    const more = this.res.write(chunk);
    if (waiting > 0 && this.res.writableLength > this.maxBufferedBytes) {
      this.cut = true;
      this.res.destroy();
      return 'gone';
    }
    return more ? 'sent' : 'full';
  }

  /** Resolves once what is buffered has gone to the socket, or the stream closed. */
  drained(): Promise<void> {
    if (!this.open || this.res.writableLength === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.once('drain', done);
      this.res.once('close', done);
    });
  }
}
