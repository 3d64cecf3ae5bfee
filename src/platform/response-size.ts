import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../common/errors.js';

/**
 * Replaces an answer larger than `maxBytes` with a 400 in the door's own shape, before a byte of
 * it is sent: both doors hand Express the whole serialized body at once (res.json, Apollo's
 * res.send), so the size is known when it is sent and nothing is ever half-sent.
 */
export function responseSizeLimit(maxBytes: number, answer: (res: Response, error: AppError) => void) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const send = res.send;
    res.send = function (this: Response, body?: unknown) {
      const size = typeof body === 'string' ? Buffer.byteLength(body) : Buffer.isBuffer(body) ? body.length : 0;
      // What the request built, sent or refused: the organization gate weighs an organization by it.
      res.locals.answerBytes = size;
      if (size <= maxBytes || res.headersSent) return send.call(this, body);
      res.send = send;
      answer(
        res,
        new AppError(
          'BAD_USER_INPUT',
          `The answer would be ${size} bytes, over the limit of ${maxBytes}; ask for fewer rows or fields`,
        ),
      );
      return res;
    };
    next();
  };
}
