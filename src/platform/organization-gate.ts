import type { NextFunction, Request, Response } from 'express';
import { principalOf } from './principal.js';

/**
 * At most `limit` requests of one organization run at once in this process; the others wait
 * their turn in arrival order (the request timeout still holds while they wait). One tenant
 * sending many heavy requests in parallel then takes `limit` slots of the event loop, not all
 * of it: /healthz and other organizations keep answering. 0 turns it off.
 */
export class OrganizationGate {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly limit: number) {}

  /** Requests running now and waiting now, for one organization (tests and metrics). */
  load(organizationId: string): { running: number; waiting: number } {
    return { running: this.running.get(organizationId) ?? 0, waiting: this.waiting.get(organizationId)?.length ?? 0 };
  }

  middleware() {
    return (_req: Request, res: Response, next: NextFunction): void => {
      const actor = principalOf(res).actor;
      if (!actor || this.limit === 0) return next();
      const organizationId = actor.organizationId;
      this.acquire(organizationId, () => {
        // Answered while waiting (the request timeout) or the client went away: pass the slot on.
        if (res.writableEnded || res.destroyed) return this.release(organizationId);
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          this.release(organizationId);
        };
        res.once('finish', release);
        res.once('close', release);
        next();
      });
    };
  }

  private acquire(organizationId: string, run: () => void): void {
    const running = this.running.get(organizationId) ?? 0;
    if (running < this.limit) {
      this.running.set(organizationId, running + 1);
      run();
      return;
    }
    const queue = this.waiting.get(organizationId) ?? [];
    queue.push(run);
    this.waiting.set(organizationId, queue);
  }

  private release(organizationId: string): void {
    const queue = this.waiting.get(organizationId);
    const next = queue?.shift();
    if (queue && queue.length === 0) this.waiting.delete(organizationId);
    if (next) {
      // The slot goes straight to the next in line: the running count stays.
      next();
      return;
    }
    const running = (this.running.get(organizationId) ?? 1) - 1;
    if (running <= 0) this.running.delete(organizationId);
    else this.running.set(organizationId, running);
  }
}
