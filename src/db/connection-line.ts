// PGlite is one session: Kysely lends its one connection to one query or transaction at a time, and
// everything else waits in line. Kysely's own line (ConnectionMutex) is first come, first served, so a
// request of one tenant queued behind every statement a campaign's runner had already queued: with 100
// calls in flight, seconds. This line serves the statements of requests (src/db/request-scope.ts knows
// them) before those of background work (the runner, the workers), and never lets background work wait
// for more than REQUESTS_IN_A_ROW requests' turns while it is waiting, so a flood of requests cannot
// stop a campaign.

/** Turns requests take in a row while background work waits, before one background turn. */
export const REQUESTS_IN_A_ROW = 4;

/** Who waits for the one connection, requests first. */
export class ConnectionLine {
  #held = false;
  #requests: (() => void)[] = [];
  #background: (() => void)[] = [];
  #streak = 0;

  /** Resolves when the caller holds the connection; `release` hands it on. */
  acquire(request: boolean): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => (request ? this.#requests : this.#background).push(resolve));
  }

  /** Hands the connection to the next in line: a request, unless background work has waited REQUESTS_IN_A_ROW turns. */
  release(): void {
    if (this.#background.length > 0 && (this.#requests.length === 0 || this.#streak >= REQUESTS_IN_A_ROW)) {
      this.#streak = 0;
      this.#background.shift()!();
      return;
    }
    const next = this.#requests.shift();
    if (!next) {
      this.#held = false;
      return;
    }
    // Counted only while background work waits: a burst of requests alone owes nothing.
    this.#streak = this.#background.length > 0 ? this.#streak + 1 : 0;
    next();
  }

  /** Waiting now, by kind (metrics). */
  get waiting(): { requests: number; background: number } {
    return { requests: this.#requests.length, background: this.#background.length };
  }
}
