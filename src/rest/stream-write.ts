import type { Response } from 'express';

/** Writes one chunk of a streamed answer, waiting for the socket to drain when its buffer is full; false once the client is gone. */
export async function write(res: Response, chunk: string): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(chunk)) return true;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
  return !res.destroyed;
}
