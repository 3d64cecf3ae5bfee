import type { RequestDeadline } from '../../src/platform/request-timeout.js';

/**
 * Request deadlines that fire when the test says, not after REQUEST_TIMEOUT_MS of wall time
 * (startTestApp's `seams.requestDeadline`): a test brings its request to the point it is about
 * (the model provider holds the call, the statement waits for a lock), then fires the deadline, so a
 * loaded machine can neither time out the requests it makes on the way nor reach the point too late.
 */
export class TestDeadlines {
  private readonly running = new Set<() => void>();

  readonly deadline: RequestDeadline = (fire) => {
    const entry = () => fire();
    this.running.add(entry);
    return () => void this.running.delete(entry);
  };

  /** Requests whose deadline is still to come (a finished request's deadline is cancelled). */
  get pending(): number {
    return this.running.size;
  }

  /** Every request under way reaches its deadline now; answers how many did. */
  fire(): number {
    const due = [...this.running];
    this.running.clear();
    for (const fire of due) fire();
    return due.length;
  }
}
