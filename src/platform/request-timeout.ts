import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../common/errors.js';

/**
 * Answers 503 UNAVAILABLE (in the door's own shape) when the handler has not answered within
 * `ms`; the timer is cleared as soon as the response finishes or the client goes away. The late
 * handler's own answer is dropped (res.locals.timedOut tells the error handler not to log it).
 */
export function requestTimeout(ms: number, answer: (res: Response, error: AppError) => void) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const timer = setTimeout(() => {
      if (res.headersSent) return;
      res.locals.timedOut = true;
      answer(res, new AppError('UNAVAILABLE', `The request was not answered within ${ms} ms; try again shortly`));
    }, ms);
    const clear = () => clearTimeout(timer);
    res.once('finish', clear);
    res.once('close', clear);
    next();
  };
}
