import type { NextFunction, Request, Response } from 'express';

/**
 * Once `stopping()` is true, every answer written from then on carries `Connection: close`, so a
 * keep-alive client opens a new connection (to a replica still in rotation) instead of reusing one
 * that the shutdown is about to cut. Decided when the headers are written, so requests already in
 * flight at the signal close their connection too, and the listener closes without waiting for them.
 */
export function closeConnectionsWhen(stopping: () => boolean) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const writeHead = res.writeHead;
    res.writeHead = function (this: Response, ...args: unknown[]) {
      if (stopping() && !this.headersSent) this.setHeader('Connection', 'close');
      return (writeHead as (...rest: unknown[]) => Response).apply(this, args);
    } as Response['writeHead'];
    next();
  };
}
