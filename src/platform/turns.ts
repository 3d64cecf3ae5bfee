/**
 * Turns of the event loop handed out one at a time, in arrival order: work of many clients that must
 * not hold the loop (each SSE stream's replay, a page at a time) runs one piece per turn, whatever the
 * number of clients, and everything else the process does comes between two pieces. Node accepts one
 * new connection per turn, and a query of the embedded database answers without giving the loop a
 * turn: ten replays each reading its pages in a row held it for seconds, while new requests (other
 * tenants, /healthz, the burst's own refusals) waited to be accepted.
 */
export class Turns {
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;

  /** Resolves at the caller's turn: on a later turn of the loop, after those who asked before. */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.waiting.shift()?.();
      if (this.waiting.length > 0) this.schedule();
    });
  }
}
