import type { NextFunction, Request, Response } from 'express';
import type { AppError } from '../common/errors.js';
import { AnswerBudget, answerTooLarge, withAnswerBudget } from './answer-budget.js';

/**
 * Keeps every answer within `maxBytes`, refused with a 400 in the door's own shape and never half-sent.
 *
 * Early: the request runs with an AnswerBudget (AsyncLocalStorage) that both doors charge as large
 * values go into the answer (fields marked LARGE_VALUE). When it is spent, the request's work stops
 * (its abort signal fires with the refusal: no further statement, no further resolver) and the
 * refusal is answered without building or serializing the rest.
 *
 * Last: both doors hand Express the whole serialized body at once (res.json, Apollo's res.send), so
 * an answer over the limit that the budget did not see is still replaced before a byte of it is sent.
 */
export function responseSizeLimit(maxBytes: number, answer: (res: Response, error: AppError) => void) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const budget = new AnswerBudget(maxBytes);
    res.locals.answerBudget = budget;
    budget.onExceeded((error, charged) => {
      res.locals.answerBytes = charged;
      (res.locals.abortRequest as ((reason: AppError) => void) | undefined)?.(error);
    });
    const send = res.send;
    res.send = function (this: Response, body?: unknown) {
      const size = typeof body === 'string' ? Buffer.byteLength(body) : Buffer.isBuffer(body) ? body.length : 0;
      const refusal = budget.exceeded ?? (size > maxBytes ? answerTooLarge(size, maxBytes) : undefined);
      // What the request built, sent or refused: the organization gate weighs an organization by it.
      res.locals.answerBytes = Math.max(size, budget.charged);
      if (!refusal || res.headersSent) return send.call(this, body);
      res.send = send;
      answer(res, refusal);
      return res;
    };
    withAnswerBudget(budget, next);
  };
}

/** The request's answer budget (undefined outside the doors, e.g. for /healthz). */
export function answerBudgetOf(res: Response): AnswerBudget | undefined {
  return res.locals.answerBudget as AnswerBudget | undefined;
}
