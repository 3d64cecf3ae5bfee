import { AsyncResource } from 'node:async_hooks';
import type { NextFunction, Request, Response } from 'express';
import { principalOf } from './principal.js';
import { answerBudgetOf } from './response-size.js';

/** An organization whose answers average more than this is building large answers... */
export const LARGE_ANSWER_BYTES = 512 * 1024;
/** ...and runs at most this many requests at once until its answers are small again. */
export const LARGE_ANSWER_LIMIT = 1;
/** Weight of the newest answer in an organization's running average of answer sizes. */
const AVERAGE_WEIGHT = 0.2;

/**
 * At most `limit` requests of one organization run at once in this process; the others wait
 * their turn in arrival order (the request timeout still holds while they wait). An organization
 * whose recent answers are large (building and serializing them is the event loop's work, not a
 * wait on the network) gets LARGE_ANSWER_LIMIT places until its answers are small again. One
 * tenant then takes a bounded share of the event loop: /healthz and other organizations keep
 * answering. A request that spends its answer budget weighs its organization at once, with the
 * bytes it had charged, so the organization's next requests wait without waiting for it to finish.
 * 0 turns it off.
 */
export class OrganizationGate {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly answerBytes = new Map<string, number>();

  constructor(private readonly limit: number) {}

  /** Requests running now and waiting now, and the places the organization has (tests and metrics). */
  load(organizationId: string): { running: number; waiting: number; places: number } {
    return {
      running: this.running.get(organizationId) ?? 0,
      waiting: this.waiting.get(organizationId)?.length ?? 0,
      places: this.placesOf(organizationId),
    };
  }

  /** The running average of the organization's answer sizes, 0 before its first (tests and metrics). */
  averageAnswerBytes(organizationId: string): number {
    return this.answerBytes.get(organizationId) ?? 0;
  }

  middleware() {
    return (_req: Request, res: Response, next: NextFunction): void => {
      const actor = principalOf(res).actor;
      if (!actor || this.limit === 0) return next();
      const organizationId = actor.organizationId;
      this.admit(organizationId, () => {
        // Answered while waiting (the request timeout) or the client went away: pass the place on.
        if (res.writableEnded || res.destroyed) return this.leave(organizationId);
        let left = false;
        let weighed = false;
        answerBudgetOf(res)?.onExceeded((_refusal, chargedBytes) => {
          weighed = true;
          this.weigh(organizationId, chargedBytes);
        });
        const leave = () => {
          if (left) return;
          left = true;
          const answerBytes = typeof res.locals.answerBytes === 'number' && !weighed ? res.locals.answerBytes : undefined;
          this.leave(organizationId, answerBytes);
        };
        res.once('finish', leave);
        res.once('close', leave);
        next();
      });
    };
  }

  /**
   * Runs `run` now if the organization has a free place, else when one frees up. It runs in the
   * async context it was admitted in, not that of the request whose leaving freed the place: its own
   * request context (EntityManager fork, abort signal, answer budget), never another request's.
   */
  admit(organizationId: string, run: () => void): void {
    // A free place and nobody ahead: run now, in this very context (nothing to bind, nothing to queue).
    const running = this.running.get(organizationId) ?? 0;
    if (!this.waiting.has(organizationId) && running < this.placesOf(organizationId)) {
      this.running.set(organizationId, running + 1);
      run();
      return;
    }
    const queue = this.waiting.get(organizationId) ?? [];
    queue.push(AsyncResource.bind(run));
    this.waiting.set(organizationId, queue);
    this.drain(organizationId);
  }

  /**
   * Waits for one of the organization's places, in turn with its requests, for work that is not a
   * request of its own (an SSE stream's replay, a page at a time); answers the function that gives
   * the place back, once, however often it is called.
   */
  take(organizationId: string): Promise<() => void> {
    if (this.limit === 0) return Promise.resolve(() => undefined);
    return new Promise((resolve) =>
      this.admit(organizationId, () => {
        let left = false;
        resolve(() => {
          if (left) return;
          left = true;
          this.leave(organizationId);
        });
      }),
    );
  }

  /** A request of the organization is done; `answerBytes` is the size of what it answered (or would have). */
  leave(organizationId: string, answerBytes?: number): void {
    if (answerBytes !== undefined) this.weigh(organizationId, answerBytes);
    const running = (this.running.get(organizationId) ?? 1) - 1;
    if (running <= 0) this.running.delete(organizationId);
    else this.running.set(organizationId, running);
    this.drain(organizationId);
  }

  /** Counts one answer of the organization (sent, refused, or found over the limit while it was built) in its running average. */
  weigh(organizationId: string, answerBytes: number): void {
    const average = this.answerBytes.get(organizationId);
    this.answerBytes.set(organizationId, average === undefined ? answerBytes : average + AVERAGE_WEIGHT * (answerBytes - average));
  }

  private placesOf(organizationId: string): number {
    return (this.answerBytes.get(organizationId) ?? 0) > LARGE_ANSWER_BYTES ? Math.min(this.limit, LARGE_ANSWER_LIMIT) : this.limit;
  }

  private drain(organizationId: string): void {
    const queue = this.waiting.get(organizationId);
    while (queue && queue.length > 0 && (this.running.get(organizationId) ?? 0) < this.placesOf(organizationId)) {
      this.running.set(organizationId, (this.running.get(organizationId) ?? 0) + 1);
      queue.shift()!();
    }
    if (queue && queue.length === 0) this.waiting.delete(organizationId);
  }
}

/** Lends the gate to a request that takes its places itself (the SSE route, which is not gated as a whole). */
export function lendOrganizationGate(res: Response, gate: OrganizationGate): void {
  res.locals.organizationGate = gate;
}

/** The gate lent to this request, if any. */
export function organizationGateOf(res: Response): OrganizationGate | undefined {
  return res.locals.organizationGate as OrganizationGate | undefined;
}
