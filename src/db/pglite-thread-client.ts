import { Worker } from 'node:worker_threads';

// The embedded database, run in a thread of its own (pglite-thread.ts) so that a long statement — an
// import, a campaign's claims, a deep page — never stops the event loop: requests of every tenant,
// /healthz, timers and sockets go on while PGlite works. PgliteThreadClient has the part of PGlite's
// interface the gateway uses (what Kysely's PGlite driver calls, `exec`, `listen`, `dumpDataDir`), and
// forwards each call to the one PGlite the thread owns. PGlite is still one session: statements run one
// at a time there, in the order they arrive (docs/operating.md).
//
// Why not PGlite's own PGliteWorker: it is built for browser Web Workers (global postMessage and
// addEventListener in the worker, BroadcastChannel and navigator.locks for its leader election between
// tabs), and does not run under Node's worker_threads (electric-sql/pglite#398); it also parses rows on
// the calling thread. Why not pglite-socket: it serves the wire protocol on the same event loop, and
// multiplexes connections over PGlite's one session, transactions included ("not all cases might be
// covered", its README).

/** What the thread is started with. */
export interface ThreadInit {
  /** A directory of PGlite's files; none: in memory. */
  dataDir?: string;
  /** A dump (dumpDataDir's tarball) to start from. */
  loadDataDir?: Uint8Array;
}

export type ThreadRequest =
  | { id: number; op: 'query'; sql: string; params?: unknown[]; rowMode?: 'object' | 'array'; tx?: number }
  | { id: number; op: 'exec'; sql: string; tx?: number }
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'listen'; channel: string }
  | { id: number; op: 'unlisten'; channel: string }
  | { id: number; op: 'dump'; compression?: 'none' | 'gzip' | 'auto' }
  | { id: number; op: 'close' };

/** A request before it has its id. */
type Unsent = ThreadRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;

/** An error as the thread sends it: message, name and the SQLSTATE fields (code, detail, constraint…). */
export type WireError = { message: string; name?: string } & Record<string, string | number | boolean | undefined>;

export type ThreadReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WireError }
  | { notify: string; payload: string }
  | { ready: true }
  | { failed: WireError };

export interface ThreadResults<T = Record<string, unknown>> {
  rows: T[];
  affectedRows?: number;
  fields: { name: string; dataTypeID: number }[];
}

/** Statements inside one held transaction (PGlite's `transaction(callback)` gives one to its callback). */
export interface ThreadTransaction {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: { rowMode?: 'object' | 'array' }): Promise<ThreadResults<T>>;
  exec(sql: string): Promise<ThreadResults[]>;
  readonly closed: boolean;
}

/** The thread stopped (crashed, or was closed): like a lost PostgreSQL connection, 57P01 answers 503. */
function stoppedError(why: string): Error {
  return Object.assign(new Error(`the embedded database's thread has stopped (${why})`), { code: '57P01' });
}

function fromWire(wire: WireError): Error {
  const { message, name, ...fields } = wire;
  const error = new Error(message);
  if (name) error.name = name;
  return Object.assign(error, fields);
}

/** The thread's file beside this one: TypeScript when the sources run (the tests), JavaScript from dist/. */
function threadFile(): URL {
  return new URL(import.meta.url.endsWith('.ts') ? './pglite-thread.ts' : './pglite-thread.js', import.meta.url);
}

export class PgliteThreadClient {
  #worker: Worker;
  #nextId = 1;
  #pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  #listeners = new Map<string, Set<(payload: string) => void>>();
  #closed = false;
  #ready = false;
  #stopped: Error | undefined;
  #closing = false;
  #lost!: (error: Error) => void;
  readonly waitReady: Promise<void>;
  /** Settles if the thread stops without being closed (PGlite crashed): every call fails from then on. */
  readonly lost = new Promise<Error>((resolve) => (this.#lost = resolve));

  private constructor(init: ThreadInit) {
    // A dump that owns its whole buffer is moved to the thread, not copied (a file's bytes, tens of MB).
    const dump = init.loadDataDir;
    const owned = dump && dump.byteOffset === 0 && dump.byteLength === dump.buffer.byteLength && dump.buffer instanceof ArrayBuffer;
    this.#worker = new Worker(threadFile(), { workerData: init, transferList: owned ? [dump.buffer as ArrayBuffer] : [] });
    // The thread keeps the process alive only while a call waits on it (see #call), as PGlite in the
    // process did not at all: an idle database never holds a CLI or a test run open.
    this.#worker.unref();
    this.waitReady = new Promise<void>((resolve, reject) => {
      this.#worker.on('message', (message: ThreadReply) => {
        if ('ready' in message) {
          this.#ready = true;
          resolve();
        } else if ('failed' in message) reject(fromWire(message.failed));
        else if ('notify' in message) {
          for (const listener of this.#listeners.get(message.notify) ?? []) queueMicrotask(() => listener(message.payload));
        } else this.#settle(message);
      });
      this.#worker.on('error', (error) => {
        reject(error);
        this.#stop(error instanceof Error ? error.message : String(error));
      });
      this.#worker.on('exit', (code) => {
        reject(stoppedError(`exit code ${code}`));
        this.#stop(`exit code ${code}`);
      });
    });
  }

  /** Starts the thread and its PGlite: on `dataDir` (files), from `loadDataDir` (a dump), or empty in memory. */
  static async create(init: ThreadInit = {}): Promise<PgliteThreadClient> {
    const client = new PgliteThreadClient(init);
    client.#worker.ref();
    try {
      await client.waitReady;
    } catch (error) {
      await client.#worker.terminate();
      throw error;
    } finally {
      client.#worker.unref();
    }
    return client;
  }

  get ready(): boolean {
    return this.#ready && !this.#closed;
  }

  get closed(): boolean {
    return this.#closed;
  }

  query<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: { rowMode?: 'object' | 'array' }): Promise<ThreadResults<T>> {
    return this.#call({ op: 'query', sql, params, rowMode: options?.rowMode }) as Promise<ThreadResults<T>>;
  }

  exec(sql: string): Promise<ThreadResults[]> {
    return this.#call({ op: 'exec', sql }) as Promise<ThreadResults[]>;
  }

  /**
   * Runs `callback` in a transaction the thread holds open (PGlite's exclusive transaction) until the
   * callback settles: COMMIT when it resolves, ROLLBACK when it throws, as PGlite's own `transaction`.
   */
  async transaction<T>(callback: (tx: ThreadTransaction) => Promise<T>): Promise<T> {
    const id = (await this.#call({ op: 'begin' })) as number;
    let closed = false;
    const tx: ThreadTransaction = {
      query: (sql, params, options) => this.#call({ op: 'query', sql, params, rowMode: options?.rowMode, tx: id }) as never,
      exec: (sql) => this.#call({ op: 'exec', sql, tx: id }) as never,
      get closed() {
        return closed;
      },
    };
    let result: T;
    try {
      result = await callback(tx);
    } catch (error) {
      closed = true;
      await this.#call({ op: 'end', tx: id, commit: false }).catch(() => undefined);
      throw error;
    }
    closed = true;
    await this.#call({ op: 'end', tx: id, commit: true });
    return result;
  }

  /** LISTEN on `channel`; notifications come when the writing transaction commits. Answers the unlisten. */
  async listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>> {
    let listeners = this.#listeners.get(channel);
    if (!listeners) this.#listeners.set(channel, (listeners = new Set()));
    listeners.add(callback);
    if (listeners.size === 1) await this.#call({ op: 'listen', channel });
    return async () => {
      listeners.delete(callback);
      if (listeners.size === 0 && this.#listeners.get(channel) === listeners) {
        this.#listeners.delete(channel);
        if (!this.#closed) await this.#call({ op: 'unlisten', channel });
      }
    };
  }

  /** The database's files as a tarball (PGlite's dumpDataDir). */
  async dumpDataDir(compression: 'none' | 'gzip' | 'auto' = 'none'): Promise<Blob> {
    return new Blob([(await this.#call({ op: 'dump', compression })) as ArrayBuffer]);
  }

  /** Closes PGlite cleanly (a checkpoint on disk) and ends the thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closing = true;
    try {
      if (!this.#stopped) await this.#call({ op: 'close' });
    } finally {
      this.#closed = true;
      await this.#worker.terminate();
    }
  }

  #call(request: Unsent): Promise<unknown> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    if (this.#closed) return Promise.reject(stoppedError('closed'));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      try {
        this.#worker.postMessage({ ...request, id });
      } catch (error) {
        reject(error as Error); // a parameter that cannot be cloned
        return;
      }
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve, reject });
    });
  }

  #settle(message: Extract<ThreadReply, { id: number }>): void {
    const waiting = this.#pending.get(message.id);
    if (!waiting) return;
    this.#pending.delete(message.id);
    if (this.#pending.size === 0) this.#worker.unref();
    if (message.ok) waiting.resolve(message.value);
    else waiting.reject(fromWire(message.error));
  }

  #stop(why: string): void {
    const first = !this.#stopped;
    this.#stopped ??= stoppedError(why);
    for (const waiting of this.#pending.values()) waiting.reject(this.#stopped);
    this.#pending.clear();
    if (first && this.#ready && !this.#closing && !this.#closed) this.#lost(this.#stopped);
    this.#closed = true;
  }
}
