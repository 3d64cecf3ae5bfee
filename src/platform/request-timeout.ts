import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../common/errors.js';

/**
 * Answers 503 UNAVAILABLE (in the door's own shape) when the handler has not answered within
 * `ms`; the timer is cleared as soon as the response finishes or the client goes away. The late
 * handler's own answer is dropped (res.locals.timedOut tells the error handler not to log it).
 *
 * The request's work stops too: `res.locals.abortSignal` (see abortSignalOf) is aborted at the
 * deadline, or when the client goes away before its answer, with an UNAVAILABLE AppError as the
 * reason, or with the refusal of another limit that stops the request (`res.locals.abortRequest`:
 * the answer budget). The request's EntityManager fork carries it (app.ts), so no statement starts
 * after it and on PostgreSQL the running ones are cancelled; GraphQL resolvers check it before they run.
 */
export function requestTimeout(ms: number, answer: (res: Response, error: AppError) => void, deadline: RequestDeadline = wallClockDeadline) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const controller = new AbortController();
    res.locals.abortSignal = controller.signal;
    // Another limit may stop the request's work too (the answer budget, src/platform/response-size.ts).
    res.locals.abortRequest = (reason: AppError) => {
      if (!controller.signal.aborted) controller.abort(reason);
    };
    const cancel = deadline(() => {
      const error = new AppError('UNAVAILABLE', `The request was not answered within ${ms} ms; try again shortly`);
      controller.abort(error);
      if (res.headersSent) return;
      res.locals.timedOut = true;
      answer(res, error);
    }, ms);
    res.once('finish', cancel);
    res.once('close', () => {
      cancel();
      // A client that hung up gets no answer: what the request still had to do is wasted work.
      if (!res.writableFinished && !controller.signal.aborted) {
        const reason = new AppError('UNAVAILABLE', 'The client closed the connection before the answer');
        CLIENT_GONE.add(reason);
        controller.abort(reason);
      }
    });
    next();
  };
}

/** Starts a request's deadline: `fire` runs once `ms` have passed, unless the returned function cancelled it first. */
export type RequestDeadline = (fire: () => void, ms: number) => () => void;

/** The served one: a timer. Tests pass their own, which fires when the test says (startTestApp's seams). */
export const wallClockDeadline: RequestDeadline = (fire, ms) => {
  const timer = setTimeout(fire, ms);
  return () => clearTimeout(timer);
};

/** The reasons of requests stopped because their client went away. */
const CLIENT_GONE = new WeakSet<object>();

/**
 * Whether the request's work was stopped because its client went away. What then fails (every
 * statement and field still under way) is the stop, not a fault: there is nobody to answer and
 * nothing to log but the request's line (`aborted: true`). A GraphQL page used to log one error with
 * its stack per field the stop reached: 400 for a page of programs with their executions' audiences.
 */
export function clientWentAway(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && CLIENT_GONE.has(signal.reason as object);
}

/** The request's abort signal (undefined outside the doors, e.g. for /healthz). */
export function abortSignalOf(res: Response): AbortSignal | undefined {
  return res.locals.abortSignal as AbortSignal | undefined;
}

/** Throws the signal's reason (an UNAVAILABLE AppError) once the request timed out or its client left. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof AppError ? signal.reason : new AppError('UNAVAILABLE', 'The request was abandoned');
}
