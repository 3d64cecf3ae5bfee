// Waiting for a state that another part of the app reaches on its own (a started runner, a worker, a
// stream). A wait has no deadline of its own: on a loaded machine the same work takes many times as
// long, and a private deadline (10 s, 20 s) failed tests whose execution was still moving. The test's
// own timeout bounds it; a test that times out says what it was still waiting for, and its last value
// (test/support/waits.ts, after each test), and the wait stops re-reading.

interface Pending {
  what: string;
  last: unknown;
  abandoned: boolean;
  /** What to tell of a wait on an event (no value read): the double's problems, the values so far. */
  describe?: () => unknown;
}

const pending = new Set<Pending>();

export interface EventuallyOptions<T> {
  /** Named in the failure of a test that timed out while waiting. */
  what?: string;
  /** Called on every value read (to check an invariant at each observed moment). */
  each?: (value: T) => void;
  /** Between reads. Default 10 ms: each read is a request or a query that competes with the work it watches. */
  everyMs?: number;
  /** A deadline of its own, for callers outside jest (the bench); a test leaves it out. */
  timeoutMs?: number;
}

/** Reads until `done` holds and answers that value. */
export async function eventually<T>(read: () => T | Promise<T>, done: (value: T) => boolean, options: EventuallyOptions<T> = {}): Promise<T> {
  const wait: Pending = { what: options.what ?? 'a state', last: undefined, abandoned: false };
  pending.add(wait);
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  try {
    for (;;) {
      if (wait.abandoned) throw new Error(`abandoned waiting for ${wait.what}`);
      if (Date.now() > deadline) throw new Error(`${wait.what}: not within ${options.timeoutMs} ms; last read ${describe(wait.last)}`);
      const value = await read();
      wait.last = value;
      options.each?.(value);
      if (done(value)) return value;
      await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 10));
    }
  } finally {
    pending.delete(wait);
  }
}

/**
 * Waits for the event `promise` stands for (a double resolves it when it receives something), told
 * like any wait when the test times out first (`describe`: what to say of the state then). Outside
 * jest, where no test timeout bounds it (the bench), `timeoutMs` does.
 */
export function waiting<T>(what: string, promise: Promise<T>, options: { describe?: () => unknown; timeoutMs?: number } = {}): Promise<T> {
  const wait: Pending = { what, last: undefined, abandoned: false, describe: options.describe };
  pending.add(wait);
  let timer: NodeJS.Timeout | undefined;
  const { timeoutMs } = options;
  const bounded =
    timeoutMs === undefined
      ? promise
      : Promise.race([
          promise,
          new Promise<never>(
            (_, reject) =>
              (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${timeoutMs} ms; ${describe(options.describe?.())}`)), timeoutMs)),
          ),
        ]);
  return bounded.finally(() => {
    clearTimeout(timer);
    pending.delete(wait);
  });
}

/** The waits still running when a test ended (it timed out): each is told to stop, and described. */
export function abandonWaits(): string[] {
  const described = [...pending].map(
    (wait) => `still waiting for ${wait.what}; ${wait.describe ? `then: ${describe(wait.describe())}` : `last read ${describe(wait.last)}`}`,
  );
  for (const wait of pending) wait.abandoned = true;
  pending.clear();
  return described;
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 2000) ?? String(value);
  } catch {
    return String(value);
  }
}
