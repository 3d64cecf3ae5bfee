import { setImmediate as turn } from 'node:timers/promises';
import { DeadlockException, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { CsvError, parse } from 'csv-parse';
import type { Logger } from 'pino';
import type { DatabaseKind } from '../../db/orm.js';
import { query } from '../../db/sql.js';
import { EventWriter } from '../events/event-writer.js';
import { IMPORT_LIMITS, readHeader, readRow, type ImportColumns, type ImportFileLimits, type ImportRow, type RefusedRow } from './contact-import-rows.js';
import {
  ChunkBeforeFailed,
  ChunkBeforeRetried,
  ChunkNotWritten,
  COUNTS_SQL,
  IMPORT_JOB_CHUNK,
  IMPORT_JOB_LEASE_MS,
  undoCreated,
  undoImportChunk,
  writeImportChunk,
  type ChunkBefore,
  type ClaimedImport,
} from './contact-import-chunk.js';
/** An import whose run ends on an error of the server this many times ends failed, not retried for ever. */
const STOPS_BEFORE_FAILED = 3;
/** A progress event every this many rows (and one when the import ends). */
const PROGRESS_EVERY = 10_000;

type Outcome = { status: 'completed' } | { status: 'failed'; error: string } | { status: 'stopped' };

/**
 * Chunks of an import written at once: two on PostgreSQL, where each has a connection of its own and the database's
 * writes (ten indexes of contacts) are most of an import's time, so a second backend on a second core
 * nearly doubles what one chunk at a time wrote; one on PGlite, one connection in one thread.
 */
export const IMPORT_LANES: Record<DatabaseKind, number> = { postgresql: 2, pglite: 1 };

/** A chunk being written, as the chunk after it sees it (writeImportChunk's `before`). */
interface Flight {
  /** Its rows' phones and externalIds (`p:…`, `e:…`): a chunk with one of them is not started beside it. */
  keys: Set<string>;
  /** The ids its look-up found, once it has looked up (empty if it ended first). */
  found: PromiseWithResolvers<ReadonlySet<string>>;
  /** Resolved when it is decided again (a retry): the chunk after it rolls back and waits for its end. */
  retried: PromiseWithResolvers<void>;
  /**
   * Its end, after onChunk: ok when it committed, the hook passed and the worker goes on; the chunk after
   * it commits only then (a test's hook acts at a known point, and a stop there stops before the next).
   */
  settled: Promise<{ ok: boolean } | { error: unknown }>;
}

function keysOf(rows: (ImportRow | RefusedRow)[]): Set<string> {
  const keys = new Set<string>();
  for (const row of rows) {
    if ('reason' in row) continue;
    keys.add(`p:${row.phone}`);
    if (row.externalId) keys.add(`e:${row.externalId}`);
  }
  return keys;
}

function shareAKey(a: Set<string>, b: Set<string>): boolean {
  for (const key of a) if (b.has(key)) return true;
  return false;
}

/** The chunk before, as writeImportChunk waits for it. */
function asBefore(flight: Flight): ChunkBefore {
  return {
    found: flight.found.promise,
    committed: () =>
      new Promise<boolean>((resolve, reject) => {
        void flight.settled.then((done) => ('error' in done ? reject(new ChunkBeforeFailed('the chunk before failed')) : resolve(done.ok)));
        void flight.retried.promise.then(() => reject(new ChunkBeforeRetried('the chunk before is decided again')));
      }),
  };
}

/**
 * Runs CSV imports in the background, one import per organization at a time (a unique index on the
 * running one) and, within one process, one at a time. A job is claimed with a lease; each chunk of
 * rows is written with its counts, its refused rows and `rows_read` in one transaction, so a job cut
 * off anywhere (a crash, a deploy) is resumed by whichever worker claims it next from the first row not
 * counted: nothing lost, nothing counted twice. The file is parsed from its stored parts a part at a
 * time with csv-parse, the event loop turning between chunks, and each chunk is read while the ones
 * before it are written (two at once on PostgreSQL, each committed after the one before it: IMPORT_LANES). A cancelled create import (`cancelling`)
 * is undone here too, a chunk of its contacts per transaction, before any import is read.
 */
export class ContactImportWorker {
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Imports whose run ended on an error, and how many times, in this process. */
  private readonly stops = new Map<string, number>();
  /** Called after each chunk commits (its counts written): what a test does at a known point of an import. */
  onChunk: ((importId: string) => Promise<void> | void) | null = null;

  /** `lanes`: chunks of an import written at once (IMPORT_LANES of the database's kind). */
  constructor(
    private readonly em: EntityManager,
    private readonly limits: ImportFileLimits,
    private readonly logger?: Logger,
    private readonly pollMs = 5000,
    private readonly lanes = 1,
  ) {}

  /** Polls for imports left by a stopped process or another replica (the server calls it at start). */
  start(): void {
    this.stopped = false;
    const poll = () => {
      this.wake();
      this.timer = setTimeout(poll, this.pollMs);
      this.timer.unref();
    };
    poll();
  }

  /** Looks for work now (an upload just queued one); a call while it runs makes it look again after. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.again && !this.stopped) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** Stops after the chunk in flight; the job stays running until its lease ends, then is resumed. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Waits for the work in flight (tests, and the bench, that wake it). */
  async idle(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      let job: ClaimedImport | undefined;
      try {
        const undo = await this.claimUndo();
        if (undo) {
          await this.undo(undo);
          continue;
        }
        job = await this.claim();
      } catch (error) {
        if (error instanceof UniqueConstraintViolationException) return; // another worker took the organization's place
        this.logger?.error({ err: error }, 'contact import claim failed');
        return;
      }
      if (!job) return;
      try {
        await this.run(job);
      } catch (error) {
        // A database lost mid-chunk: the chunk rolled back; the lease runs out and the job is resumed.
        // One that stops this process's worker STOPS_BEFORE_FAILED times ends failed (resume retries it).
        this.logger?.error({ err: error, importId: job.id }, 'contact import stopped');
        const stops = (this.stops.get(job.id) ?? 0) + 1;
        this.stops.set(job.id, stops);
        if (stops >= STOPS_BEFORE_FAILED) {
          this.stops.delete(job.id);
          const why = `The import stopped ${stops} times on an error of the server (logged with the import's id); resume it to try again`;
          await this.finish(job, { status: 'failed', error: why }).catch(() => undefined);
        }
        return;
      }
    }
  }

  private fork(): EntityManager {
    return this.em.fork({ disableContextResolution: true });
  }

  private async claim(): Promise<ClaimedImport | undefined> {
    const [job] = await query<ClaimedImport>(
      this.fork(),
      `update contact_imports set status = 'running', lease_until = now() + ? * interval '1 millisecond', started_at = coalesce(started_at, now()), updated_at = now()
        where id = (select j.id from contact_imports j
          where (j.status = 'queued' or (j.status = 'running' and (j.lease_until is null or j.lease_until < now())))
            and not exists (select 1 from contact_imports o where o.organization_id = j.organization_id and o.id <> j.id and o.status in ('running', 'cancelling'))
          order by j.created_at, j.id limit 1 for update skip locked)
        returning id, organization_id, mode, key, audience_id, rows_read`,
      [IMPORT_JOB_LEASE_MS],
    );
    return job;
  }

  /** A cancelled create import to undo whose lease is free (none held, or its process lost). */
  private async claimUndo(): Promise<string | undefined> {
    const [job] = await query<{ id: string }>(
      this.fork(),
      `update contact_imports set lease_until = now() + ? * interval '1 millisecond', updated_at = now()
        where id = (select j.id from contact_imports j where j.status = 'cancelling' and (j.lease_until is null or j.lease_until < now())
          order by j.created_at, j.id limit 1 for update skip locked)
        returning id`,
      [IMPORT_JOB_LEASE_MS],
    );
    return job?.id;
  }

  /** Deletes a cancelled create import's contacts a chunk per transaction, then it is cancelled; a stop leaves the rest for the next claim. */
  private async undo(importId: string): Promise<void> {
    let sinceEvent = 0;
    for (;;) {
      sinceEvent += IMPORT_JOB_CHUNK;
      const progress = sinceEvent >= PROGRESS_EVERY;
      if (progress) sinceEvent = 0;
      const deleted = await this.fork().transactional((em) => undoImportChunk(em, importId, progress));
      if (deleted === null || deleted < IMPORT_JOB_CHUNK) return;
      await this.onChunk?.(importId);
      await turn();
      if (this.stopped) return;
    }
  }

  private async run(job: ClaimedImport): Promise<void> {
    const outcome = await this.read(job);
    if (outcome.status === 'stopped') return;
    await this.finish(job, outcome);
  }

  /** Parses the stored file from the start, skipping the rows already counted, and writes the rest chunk by chunk. */
  private async read(job: ClaimedImport): Promise<Outcome> {
    // Fed a part at a time, its records taken as they are parsed ('data', in order): when a later
    // record breaks the parser, every record before it has been taken and is written.
    const parser = parse({ bom: true, relax_column_count: true, relax_quotes: true, max_record_size: IMPORT_LIMITS.maxRecordBytes, skip_empty_lines: true });
    const parsed: string[][] = [];
    let parseError: unknown = null;
    parser.on('data', (record: string[]) => parsed.push(record));
    parser.on('error', (error) => (parseError = error));
    const settle = (action: (done: () => void) => void) =>
      new Promise<void>((resolve) => {
        const done = () => {
          parser.off('error', done);
          resolve();
        };
        parser.once('error', done);
        action(done);
      });
    let columns: ImportColumns | undefined;
    let dataRow = 0;
    let chunk: (ImportRow | RefusedRow)[] = [];
    let sinceEvent = 0;
    // The full chunks being written while the next one is read (its rows parsed and checked here as the
    // database writes): up to `lanes` at once, started in order, each committed after the one before it
    // (writeImportChunk's `before`), and one that shares a phone or externalId with the one before it
    // started only after that one committed, since a chunk is decided against what the chunks before it
    // wrote. Their errors are kept until they are waited for, then thrown.
    const flights: Flight[] = [];
    /** Waits for the oldest chunk in flight: false when the import stops there (cancelled, its lease taken, or this worker stopping). */
    const written = async (): Promise<boolean> => {
      const flight = flights.shift();
      if (!flight) return true;
      const done = await flight.settled;
      if ('error' in done) throw done.error;
      if (!done.ok) return false;
      await turn();
      return !this.stopped;
    };
    const allWritten = async (): Promise<boolean> => {
      while (flights.length > 0) if (!(await written())) return false;
      return true;
    };
    /** Starts a full chunk beside the one in flight, or after it. */
    const dispatch = async (rows: (ImportRow | RefusedRow)[], progress: boolean): Promise<boolean> => {
      const keys = keysOf(rows);
      while (flights.length >= this.lanes || (flights.length > 0 && shareAKey(keys, flights.at(-1)!.keys))) if (!(await written())) return false;
      const before = flights.at(-1);
      const flight: Flight = { keys, found: Promise.withResolvers(), retried: Promise.withResolvers(), settled: undefined as never };
      flight.settled = this.write(job, rows, progress, flight, before)
        .then(async (ok) => {
          if (ok) await this.onChunk?.(job.id);
          return { ok: ok && !this.stopped };
        })
        .then(
          (done) => done,
          (error: unknown) => ({ error }),
        );
      void flight.settled.then(() => flight.found.resolve(new Set()));
      flights.push(flight);
      return true;
    };
    /** The chunk read, and those in flight before it: the rest of the file is not read. */
    const last = async (): Promise<boolean> => (await allWritten()) && (chunk.length === 0 || (await this.write(job, chunk, false)));
    // What was read before the file went wrong is written and counted, then the import ends failed.
    const failed = async (error: string): Promise<Outcome> => ((await last()) ? { status: 'failed', error } : { status: 'stopped' });
    /** The records parsed so far, into chunks; an outcome when the import ends here. */
    const take = async (): Promise<Outcome | null> => {
      for (const record of parsed.splice(0)) {
        if (!columns) {
          const header = readHeader(record, job.key);
          if ('error' in header) return { status: 'failed', error: header.error };
          columns = header;
          await query(this.fork(), 'update contact_imports set columns = ?::jsonb where id = ?', [JSON.stringify(header.names), job.id]);
          continue;
        }
        dataRow++;
        if (dataRow <= job.rows_read) continue;
        if (dataRow > this.limits.maxRows)
          return failed(`The file has more than ${this.limits.maxRows} rows (IMPORT_MAX_ROWS); the rows after row ${this.limits.maxRows + 1} were not read`);
        chunk.push(readRow(record, dataRow + 1, columns));
        if (chunk.length < IMPORT_JOB_CHUNK) continue;
        sinceEvent += chunk.length;
        const progress = sinceEvent >= PROGRESS_EVERY;
        if (progress) sinceEvent = 0;
        if (!(await dispatch(chunk, progress))) return { status: 'stopped' };
        chunk = [];
      }
      return null;
    };
    try {
      for await (const part of this.parts(job.id)) {
        await settle((done) => parser.write(part, () => done()));
        const ended = await take();
        if (ended) return ended;
        if (parseError) break;
      }
      if (!parseError) await settle((done) => parser.end(() => done()));
      const ended = await take();
      if (ended) return ended;
      if (parseError instanceof CsvError) return await failed(parserError(parseError));
      if (parseError) throw parseError;
      if (!columns) return { status: 'failed', error: 'The file is empty: it has no header' };
      return (await last()) ? { status: 'completed' } : { status: 'stopped' };
    } finally {
      parser.destroy();
      // Left on an error: the chunks in flight end (committed or rolled back) before the job is ended.
      await Promise.all(flights.map((flight) => flight.settled));
    }
  }

  /** The file's parts in order, one read per part. */
  private async *parts(importId: string): AsyncGenerator<Buffer> {
    for (let seq = 0; ; seq++) {
      const [part] = await query<{ data: Uint8Array }>(this.fork(), 'select data from contact_import_parts where import_id = ? and seq = ?', [importId, seq]);
      if (!part) return;
      yield Buffer.from(part.data);
    }
  }

  /**
   * One chunk in one transaction; false when the job is no longer running here (cancelled, or its lease
   * taken). `self` is this chunk as the one after it sees it, `before` the one in flight before it.
   */
  private async write(job: ClaimedImport, rows: (ImportRow | RefusedRow)[], progress: boolean, self?: Flight, before?: Flight): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.fork().transactional((em) =>
          writeImportChunk(em, job, rows, progress, before && asBefore(before), (ids) => self?.found.resolve(ids)),
        );
      } catch (error) {
        if (error instanceof ChunkNotWritten) return false;
        if (error instanceof ChunkBeforeRetried && before) {
          // Rolled back while the one before is decided again: written after it, alone.
          const done = await before.settled;
          if ('error' in done) throw new ChunkBeforeFailed('the chunk before failed');
          if (!done.ok) return false;
          before = undefined;
          attempt--;
          continue;
        }
        // A contact made meanwhile with one of the chunk's keys, or a deadlock with another writer: the chunk
        // is decided again (the one after it first rolls back).
        if ((error instanceof UniqueConstraintViolationException || error instanceof DeadlockException) && attempt < 3) {
          self?.retried.resolve();
          continue;
        }
        throw error;
      }
    }
  }

  /** The end: completed, or failed (a create import with refused rows is undone: all or nothing). */
  private async finish(job: ClaimedImport, outcome: Exclude<Outcome, { status: 'stopped' }>): Promise<void> {
    let status: string = outcome.status;
    let error = outcome.status === 'failed' ? outcome.error : null;
    if (job.mode === 'create') {
      const [counts] = await query<{ refused: number }>(this.fork(), 'select refused from contact_imports where id = ?', [job.id]);
      if (status === 'completed' && Number(counts?.refused ?? 0) > 0) {
        status = 'failed';
        error = `${counts!.refused} rows were refused; a create import is all or nothing, so no contact was kept (the refused rows say why)`;
      }
      if (status === 'failed') await undoCreated(this.fork(), job.organization_id, job.id);
    }
    await this.fork().transactional(async (em) => {
      const [ended] = await query<Record<string, unknown>>(
        em,
        `update contact_imports set status = ?, error = ?, finished_at = now(), lease_until = null, updated_at = now(),
           imported = case when ? then 0 else imported end
          where id = ? and status = 'running' returning ${COUNTS_SQL}`,
        [status, error, job.mode === 'create' && status === 'failed', job.id],
      );
      if (!ended) return;
      if (status === 'completed') await query(em, 'delete from contact_import_parts where import_id = ?', [job.id]);
      await EventWriter.write(em, { organizationId: job.organization_id, type: status === 'completed' ? 'import.completed' : 'import.failed', payload: ended });
    });
  }
}

function parserError(error: CsvError): string {
  const line = (error as { lines?: number }).lines;
  const where = line ? ` (line ${line})` : '';
  if (error.code === 'CSV_MAX_RECORD_SIZE')
    return `A row is longer than ${IMPORT_LIMITS.maxRecordBytes} bytes${where}: a quote left open, or not a CSV; the rows before it were imported`;
  if (error.code === 'CSV_QUOTE_NOT_CLOSED') return `A quote opened${where} is never closed; the rows before it were imported`;
  return `The file does not parse as CSV${where}: ${String(error.message).slice(0, 200)}`;
}
