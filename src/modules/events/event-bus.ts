import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from '../../db/orm.js';

/** The channel the `events_notify` trigger (Migration20261129000000) announces every committed event on. */
export const EVENTS_CHANNEL = 'gateway_events';
/** What the trigger's NOTIFY carries: which event, never its payload (NOTIFY is small and unauthenticated). */
export interface EventNote {
  id: string;
  organizationId: string;
  type: string;
  /** As PostgreSQL printed it (microseconds); compared only by the database. */
  createdAt: string;
}

export type EventNoteListener = (note: EventNote) => void;

/**
 * Every committed event, told to this process's listeners: on PostgreSQL through one dedicated
 * LISTEN connection per process (so a change committed by any replica reaches every replica), on
 * PGlite through the embedded instance's own LISTEN. Both hear the same trigger, so both write paths
 * (EventWriter.write and EventWriter.stage) are covered and a rolled-back event is never told.
 */
export interface EventBus {
  subscribe(listener: EventNoteListener): () => void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Parses a NOTIFY payload; anything else on the channel is ignored. */
export function parseNote(payload: string | undefined): EventNote | null {
  if (!payload) return null;
  try {
    const note = JSON.parse(payload) as Partial<EventNote>;
    if (typeof note.id !== 'string' || typeof note.organizationId !== 'string' || typeof note.type !== 'string' || typeof note.createdAt !== 'string') {
      return null;
    }
    return { id: note.id, organizationId: note.organizationId, type: note.type, createdAt: note.createdAt };
  } catch {
    return null;
  }
}

abstract class ListenerSet implements EventBus {
  private readonly listeners = new Set<EventNoteListener>();
  /** Ids told recently, so a catch-up after a reconnect and a late NOTIFY never tell one twice. */
  private readonly told = new Map<string, true>();

  subscribe(listener: EventNoteListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells the listeners, once per event id; false when it was told already. */
  protected tell(note: EventNote, logger: Logger): boolean {
    if (this.told.has(note.id)) return false;
    this.told.set(note.id, true);
    if (this.told.size > TOLD_MEMORY) this.told.delete(this.told.keys().next().value!);
    for (const listener of this.listeners) {
      try {
        listener(note);
      } catch (error) {
        logger.error({ error: error instanceof Error ? error.message : String(error) }, 'event listener failed');
      }
    }
    return true;
  }

  abstract start(): Promise<void>;
  abstract stop(): Promise<void>;
}

/** How many told ids are remembered for deduplication. */
const TOLD_MEMORY = 50_000;
/** A catch-up reads from this long before the last event heard: an event's createdAt is taken at insert, it may commit later. */
export const CATCH_UP_MARGIN = '5 seconds';
/** The most events one catch-up tells (a longer outage loses the oldest ones to the live subscribers; the events API keeps them). */
export const CATCH_UP_LIMIT = 10_000;

export interface PostgresBusOptions {
  /** The ORM's DATABASE_URL. */
  connectionString: string;
  logger: Logger;
  /** First wait before reconnecting, doubled after each failure up to maxBackoffMs (with jitter). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * One dedicated `pg` Client per process that LISTENs on gateway_events (application_name
 * `gateway-event-bus`). When it drops it reconnects with backoff and then catches up: it reads the
 * events created since shortly before the last one it heard (or since it first listened) and tells
 * those it has not told, so a subscriber misses nothing committed while the connection was down.
 */
export class PostgresEventBus extends ListenerSet {
  private client: pg.Client | null = null;
  private stopped = false;
  private failures = 0;
  private timer: NodeJS.Timeout | null = null;
  /** createdAt of the last event heard, or when this process first listened. */
  private since: string | null = null;
  private readonly logger: Logger;

  constructor(private readonly options: PostgresBusOptions) {
    super();
    this.logger = options.logger.child({ component: 'event-bus' });
  }

  async start(): Promise<void> {
    // The first connection must succeed (the database was reachable a moment ago: migrations ran); later ones retry.
    const client = await this.open();
    if (this.stopped) await client.end().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  /** True while the LISTEN connection is up. */
  get listening(): boolean {
    return this.client !== null;
  }

  /** Connects, LISTENs, and (after a drop) catches up; throws when any of it fails. */
  private async open(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.options.connectionString, application_name: 'gateway-event-bus', keepAlive: true });
    let lostAlready = false;
    const lost = (error?: Error) => {
      if (lostAlready) return;
      lostAlready = true;
      if (this.client === client) this.client = null;
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      if (this.stopped) return;
      this.logger.warn({ error: error?.message }, 'event bus LISTEN connection lost; reconnecting');
      this.schedule();
    };
    client.on('notification', (message) => {
      if (message.channel !== EVENTS_CHANNEL) return;
      const note = parseNote(message.payload);
      if (!note) return;
      this.since = note.createdAt;
      this.tell(note, this.logger);
    });
    client.on('error', () => undefined); // until connected, a failure is the caller's to handle
    try {
      await client.connect();
      await client.query(`listen ${EVENTS_CHANNEL}`);
      if (this.since === null) {
        const { rows } = await client.query<{ now: string }>('select clock_timestamp()::text as now');
        this.since = rows[0]!.now;
      } else {
        await this.catchUp(client);
      }
    } catch (error) {
      lostAlready = true;
      client.removeAllListeners('notification');
      await client.end().catch(() => undefined);
      throw error;
    }
    client.removeAllListeners('error');
    client.on('error', lost);
    client.on('end', () => lost());
    this.client = client;
    return client;
  }

  private async reconnect(): Promise<void> {
    try {
      const client = await this.open();
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.logger.info({ attempts: this.failures }, 'event bus LISTEN connection restored');
      this.failures = 0;
    } catch (error) {
      this.logger.warn({ error: error instanceof Error ? error.message : String(error), attempts: this.failures }, 'event bus could not reconnect; retrying');
      this.schedule();
    }
  }

  /** Tells the events committed since shortly before the last one heard, oldest first, skipping those already told. */
  private async catchUp(client: pg.Client): Promise<void> {
    const { rows } = await client.query<{ id: string; organization_id: string; type: string; created_at: string }>(
      `select id, organization_id, type, created_at::text as created_at from events
        where created_at > $1::timestamptz - interval '${CATCH_UP_MARGIN}' order by created_at, id limit ${CATCH_UP_LIMIT}`,
      [this.since],
    );
    let told = 0;
    for (const row of rows) {
      this.since = row.created_at;
      if (this.tell({ id: row.id, organizationId: row.organization_id, type: row.type, createdAt: row.created_at }, this.logger)) told += 1;
    }
    if (told > 0) this.logger.info({ events: told }, 'event bus caught up after reconnecting');
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    const min = this.options.minBackoffMs ?? 100;
    const max = this.options.maxBackoffMs ?? 10_000;
    const wait = Math.min(max, min * 2 ** this.failures) * (0.5 + Math.random() / 2);
    this.failures += 1;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.reconnect();
    }, wait);
    this.timer.unref();
  }
}

/** What the bus needs of PGlite: its own LISTEN (notifications are delivered when the writing transaction commits). */
interface PgliteListen {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/** The embedded database has one process: LISTEN on the PGlite instance the ORM uses. */
export class PgliteEventBus extends ListenerSet {
  private unlisten: (() => Promise<void>) | null = null;
  private readonly logger: Logger;

  constructor(
    private readonly pglite: PgliteListen,
    logger: Logger,
  ) {
    super();
    this.logger = logger.child({ component: 'event-bus' });
  }

  async start(): Promise<void> {
    this.unlisten = await this.pglite.listen(EVENTS_CHANNEL, (payload) => {
      const note = parseNote(payload);
      if (note) this.tell(note, this.logger);
    });
  }

  async stop(): Promise<void> {
    const unlisten = this.unlisten;
    this.unlisten = null;
    await unlisten?.().catch(() => undefined);
  }
}

/** The bus for the database the gateway runs on. */
export async function openEventBus(database: Database, logger: Logger): Promise<EventBus> {
  if (database.kind === 'postgresql') {
    // The same connection settings as the ORM's pool.
    return new PostgresEventBus({ connectionString: String(database.orm.config.get('clientUrl')), logger });
  }
  return new PgliteEventBus(database.embedded!, logger);
}
