import type { EntityManager } from '@mikro-orm/postgresql';
import { pino, type Logger } from 'pino';
import { AppError } from '../../../common/errors.js';
import { Event } from '../event.entity.js';
import type { EventBus, EventNote } from '../event-bus.js';

/** Events waiting in one subscriber's queue before it is cut off as too slow. */
export const SUBSCRIBER_QUEUE_MAX = 1000;
/** Rows read per statement when notes arrive together. */
const READ_BATCH = 500;

/** An async iterator fed by pushes: what one subscriber receives, in order. */
export class LiveStream<T> implements AsyncIterableIterator<T> {
  private readonly queue: T[] = [];
  private waiting: ((result: IteratorResult<T>) => void) | null = null;
  private failWaiting: ((error: unknown) => void) | null = null;
  private done = false;
  private error: unknown = null;

  constructor(
    private readonly onClose: () => void,
    private readonly max = SUBSCRIBER_QUEUE_MAX,
  ) {}

  push(value: T): void {
    if (this.done) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = this.failWaiting = null;
      resolve({ value, done: false });
      return;
    }
    if (this.queue.length >= this.max) {
      this.fail(new AppError('UNAVAILABLE', `The subscriber fell more than ${this.max} events behind and was cut off; subscribe again`));
      return;
    }
    this.queue.push(value);
  }

  /** Ends the stream with an error, after what is queued. */
  fail(error: unknown): void {
    if (this.done) return;
    this.error = error;
    this.finish();
    if (this.failWaiting) {
      const reject = this.failWaiting;
      this.waiting = this.failWaiting = null;
      reject(error);
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queue.length > 0) return Promise.resolve({ value: this.queue.shift()!, done: false });
    if (this.error !== null) {
      const error = this.error;
      this.error = null;
      return Promise.reject(error);
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failWaiting = reject;
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.queue.length = 0;
    this.error = null;
    this.finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.onClose();
    if (this.waiting && this.error === null) {
      const resolve = this.waiting;
      this.waiting = this.failWaiting = null;
      resolve({ value: undefined, done: true });
    }
  }
}

interface Subscriber {
  organizationId: string;
  types: ReadonlySet<string> | null;
  accept: (event: Event) => boolean;
  stream: LiveStream<Event>;
}

export interface LiveFilter {
  /** Only these event types (none: every type). */
  types?: readonly string[] | null;
  /** Only events this accepts (an execution's, a conversation's, …). */
  accept?: (event: Event) => boolean;
}

/**
 * This process's live subscribers and the bus that feeds them. A note from the bus is read as its
 * row once (by id) however many subscribers want it, and only when one of its organization wants its
 * type; the row then goes to the subscribers of that organization only, in the order the notes came.
 */
export class LiveFeed {
  private readonly subscribers = new Set<Subscriber>();
  private readonly pending: EventNote[] = [];
  private draining = false;
  private unsubscribe: (() => void) | null = null;
  private readonly logger: Logger;

  constructor(
    private readonly em: EntityManager,
    logger?: Logger,
  ) {
    this.logger = (logger ?? pino({ level: 'silent' })).child({ component: 'live-feed' });
  }

  /** Starts hearing the bus. */
  attach(bus: EventBus): void {
    this.unsubscribe = bus.subscribe((note) => this.heard(note));
  }

  /** Ends every stream and stops hearing the bus. */
  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    for (const subscriber of [...this.subscribers]) subscriber.stream.fail(new AppError('UNAVAILABLE', 'The server is shutting down; subscribe again'));
  }

  /** Subscribers open in this process (metrics, tests). */
  get size(): number {
    return this.subscribers.size;
  }

  /** The organization's events from now on, as they commit, filtered; `return()` ends it. */
  subscribe(organizationId: string, filter: LiveFilter = {}): LiveStream<Event> {
    const subscriber: Subscriber = {
      organizationId,
      types: filter.types && filter.types.length > 0 ? new Set(filter.types) : null,
      accept: filter.accept ?? (() => true),
      stream: new LiveStream<Event>(() => this.subscribers.delete(subscriber)),
    };
    this.subscribers.add(subscriber);
    return subscriber.stream;
  }

  private wants(note: EventNote): boolean {
    for (const subscriber of this.subscribers) {
      if (subscriber.organizationId === note.organizationId && (!subscriber.types || subscriber.types.has(note.type))) return true;
    }
    return false;
  }

  private heard(note: EventNote): void {
    if (!this.wants(note)) return;
    this.pending.push(note);
    if (!this.draining) void this.drain();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.pending.length > 0) {
        const notes = this.pending.splice(0, READ_BATCH);
        let rows: Event[];
        try {
          rows = await this.em.fork().find(Event, { id: { $in: notes.map((note) => note.id) } });
        } catch (error) {
          this.logger.error({ error: error instanceof Error ? error.message : String(error), events: notes.length }, 'live events could not be read');
          continue;
        }
        const byId = new Map(rows.map((row) => [row.id, row]));
        for (const note of notes) {
          const event = byId.get(note.id);
          // Gone already (retention) or not the organization the note named: nobody is told.
          if (!event || event.organization.id !== note.organizationId) continue;
          this.deliver(event);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private deliver(event: Event): void {
    for (const subscriber of [...this.subscribers]) {
      if (subscriber.organizationId !== event.organization.id) continue;
      if (subscriber.types && !subscriber.types.has(event.type)) continue;
      let accepted: boolean;
      try {
        accepted = subscriber.accept(event);
      } catch {
        accepted = false;
      }
      if (accepted) subscriber.stream.push(event);
    }
  }
}
