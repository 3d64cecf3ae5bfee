import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../../common/actor.js';
import { AppError } from '../../../common/errors.js';
import { isUuid } from '../../../db/base.entity.js';
import { Message } from '../../agents/message.entity.js';
import type { ConversationService } from '../../agents/conversation.service.js';
import type { ExecutionService } from '../../programs/execution.service.js';
import type { ProgramService } from '../../programs/program.service.js';
import { placeholders, query } from '../../../db/sql.js';
import { Event as EventEntity, type Event } from '../event.entity.js';
import { EVENT_TYPES } from '../event.types.js';
import { FINAL_STATES } from '../../programs/execution-state.js';
import { LiveFeed, type LiveStream } from './live-feed.js';
import { LiveConnections } from '../../../platform/live-connections.js';

/** Events read per statement when an SSE stream replays what it missed (one page, read and sent under one of the organization's places). */
export const REPLAY_BATCH = 100;

/**
 * The execution an event is about: its own id for `execution.*`, else its payload's `executionId`.
 * The same rule as the `events.execution_id` column the replay searches by (Migration20261203000000).
 */
export function executionIdOf(event: Pick<Event, 'type' | 'payload'>): unknown {
  const own = event.type.startsWith('execution.') ? event.payload.id : undefined;
  return own ?? event.payload.executionId;
}

/** An execution's events: its own moves and progress (`execution.*`), and the calls and triggers that name it. */
export function isExecutionEvent(executionId: string): (event: Event) => boolean {
  return (event) => executionIdOf(event) === executionId;
}

/** One replayed event as it is stored: the payload as JSON text, as the database gives it (never hydrated). */
export interface ReplayRow {
  id: string;
  type: string;
  payload: string;
  created_at: string;
}

/** Where a replay page starts: after this event (created_at as the database's text, so no microsecond is lost). */
export type ReplayCursor = Pick<ReplayRow, 'id' | 'created_at'>;

/** The statement of one replay page, on the (organization_id, execution_id, created_at, id) index; `after` adds the cursor. */
export function replayPageSql(after: boolean): string {
  return `select id, type, payload::text as payload, created_at::text as created_at from events
    where organization_id = ? and execution_id = ?${after ? ' and (created_at, id) > (?::timestamptz, ?::uuid)' : ''}
    order by created_at, id limit ${REPLAY_BATCH}`;
}

/** The events of an execution's final moves: after one, nothing more happens to it. */
export const FINAL_EVENTS: ReadonlySet<string> = new Set(['execution.completed', 'execution.stopped', 'execution.cancelled']);

/** What executionUpdated yields: the execution to read again for the subscriber. */
export interface ExecutionUpdate {
  executionId: string;
}

/**
 * The current state, then one update per event of the stream, ending after a final move's event
 * (or at once when the execution was final already). Not an async generator: its return() must
 * end a subscriber waiting for the next event at once, which a generator's does only after that
 * event has come.
 */
class UntilFinal implements AsyncIterableIterator<ExecutionUpdate> {
  private first = true;
  private ended: boolean;

  constructor(
    private readonly executionId: string,
    final: boolean,
    private readonly stream: LiveStream<Event>,
  ) {
    this.ended = final;
    if (final) void stream.return(); // nothing will follow the current state
  }

  async next(): Promise<IteratorResult<ExecutionUpdate>> {
    const update = { value: { executionId: this.executionId }, done: false as const };
    if (this.first) {
      this.first = false;
      return update;
    }
    if (this.ended) return { value: undefined, done: true };
    const result = await this.stream.next();
    if (result.done) return result;
    if (FINAL_EVENTS.has(result.value.type)) {
      this.ended = true;
      await this.stream.return();
    }
    return update;
  }

  async return(): Promise<IteratorResult<ExecutionUpdate>> {
    this.ended = true;
    this.first = false;
    await this.stream.return();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ExecutionUpdate> {
    return this;
  }
}

/**
 * The kept events after a cursor, a page at a time as the subscriber pulls them, then the live stream
 * without the events the replay already gave. Not an async generator, for the reason UntilFinal says.
 */
class AfterCursor implements AsyncIterableIterator<Event> {
  private page: Event[] = [];
  private lastPage = false;
  private closed = false;
  private readonly replayed = new Set<string>();

  constructor(
    private cursor: ReplayCursor,
    private readonly read: (after: ReplayCursor) => Promise<{ events: Event[]; last: ReplayCursor | null }>,
    private readonly stream: LiveStream<Event>,
  ) {}

  async next(): Promise<IteratorResult<Event>> {
    while (!this.closed) {
      const event = this.page.shift();
      if (event) {
        this.replayed.add(event.id);
        return { value: event, done: false };
      }
      if (this.lastPage) break;
      const { events, last } = await this.read(this.cursor);
      if (last) this.cursor = last;
      this.lastPage = last === null || events.length < REPLAY_BATCH;
      this.page = events;
    }
    for (;;) {
      const result = await this.stream.next();
      if (result.done || !this.replayed.has(result.value.id)) return result;
    }
  }

  async return(): Promise<IteratorResult<Event>> {
    this.closed = true;
    this.page = [];
    await this.stream.return();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Event> {
    return this;
  }
}

/** The unknown types of a list, refused as GET /api/events?type=bogus is (400 BAD_USER_INPUT naming the argument). */
export function checkEventTypes(types: readonly string[] | null | undefined, field: string): string[] {
  const list = types ?? [];
  const known = new Set<string>(EVENT_TYPES);
  if (list.length > EVENT_TYPES.length || list.some((type) => !known.has(type))) {
    throw AppError.badInput([{ field, message: `type must be one of ${EVENT_TYPES.join(', ')}` }]);
  }
  return [...list];
}

interface Ports {
  executions: ExecutionService;
  programs: ProgramService;
  conversations: ConversationService;
}

/**
 * Live events for both doors (GraphQL subscriptions and SSE): each method checks, with the
 * caller's permissions, that the record it follows is the caller's organization's (404 otherwise,
 * as the matching query answers), then answers a stream of that organization's events.
 */
export class LiveService {
  constructor(
    private readonly em: EntityManager,
    readonly feed: LiveFeed,
    private readonly ports: Ports,
    /** How often an SSE stream sends a heartbeat comment (SSE_HEARTBEAT_MS). */
    readonly heartbeatMs = 15_000,
    /** Open live connections per key and organization, counted across graphql-ws sockets and SSE streams. */
    readonly connections = new LiveConnections({ perKey: 10, perOrganization: 50 }),
    /** Bytes an SSE stream may hold unsent before it is cut (SSE_MAX_BUFFERED_BYTES). */
    readonly maxBufferedBytes = 1_048_576,
  ) {}

  /**
   * `events(types, after)`: every event of the organization, of these types (none: all), as it
   * commits; with `after` (an event's id), first the kept events after that one, oldest first, so a
   * subscriber that reconnects with the last id it received misses none and gets none twice (as SSE's
   * Last-Event-ID). Subscribed before the replay is read, so nothing falls between the two.
   */
  async events(actor: Actor, types: readonly string[] | null | undefined, after?: string | null): Promise<AsyncIterableIterator<Event>> {
    const known = checkEventTypes(types, 'types');
    const stream = this.feed.subscribe(actor.organizationId, { types: known });
    if (after === undefined || after === null) return stream;
    try {
      const cursor = await this.replayCursor(actor, after);
      if (!cursor) throw AppError.notFound('Event');
      return new AfterCursor(cursor, (from) => this.eventsAfter(actor.organizationId, known, from), stream);
    } catch (error) {
      await stream.return();
      throw error;
    }
  }

  /** One page of the organization's events after `after`, of these types (none: all), oldest first. */
  private async eventsAfter(organizationId: string, types: readonly string[], after: ReplayCursor): Promise<{ events: Event[]; last: ReplayCursor | null }> {
    const em = this.em.fork();
    const rows = await query<ReplayCursor>(
      em,
      `select id, created_at::text as created_at from events
        where organization_id = ? and (created_at, id) > (?::timestamptz, ?::uuid)${types.length > 0 ? ` and type in (${placeholders(types)})` : ''}
        order by created_at, id limit ${REPLAY_BATCH}`,
      [organizationId, after.created_at, after.id, ...types],
    );
    if (rows.length === 0) return { events: [], last: null };
    const found = new Map((await em.find(EventEntity, { id: { $in: rows.map((row) => row.id) } })).map((event) => [event.id, event]));
    // A row deleted by retention between the two statements is left out.
    return { events: rows.flatMap((row) => found.get(row.id) ?? []), last: rows.at(-1)! };
  }

  /**
   * An execution's moves and progress: first its current state, then one update per move, and the
   * end once it is final (completed, stopped, cancelled), so a late subscriber neither waits for a
   * move that will never come nor stays open after the last one. Subscribed before the state is
   * read, so no move falls between the two.
   */
  async execution(actor: Actor, executionId: string): Promise<AsyncIterableIterator<ExecutionUpdate>> {
    const stream = this.feed.subscribe(actor.organizationId, {
      accept: (event) => event.type.startsWith('execution.') && event.payload.id === executionId,
    });
    try {
      const execution = await this.ports.executions.get(actor, executionId);
      return new UntilFinal(execution.id, FINAL_STATES.includes(execution.status), stream);
    } catch (error) {
      await stream.return();
      throw error;
    }
  }

  /** The moves and progress of every execution of a program. */
  async programExecutions(actor: Actor, programId: string): Promise<LiveStream<Event>> {
    const program = await this.ports.programs.get(actor, programId);
    return this.feed.subscribe(actor.organizationId, {
      accept: (event) => event.type.startsWith('execution.') && event.payload.programId === program.id,
    });
  }

  /** The calls of an execution as they start and end, and as their analysis is recorded. */
  async executionCalls(actor: Actor, executionId: string): Promise<LiveStream<Event>> {
    const execution = await this.ports.executions.get(actor, executionId);
    return this.feed.subscribe(actor.organizationId, {
      types: ['call.started', 'call.ended', 'call.analyzed'],
      accept: (event) => event.payload.executionId === execution.id,
    });
  }

  /** The messages of a conversation as they are stored. */
  async conversationMessages(actor: Actor, conversationId: string): Promise<LiveStream<Event>> {
    const conversation = await this.ports.conversations.get(actor, conversationId);
    return this.feed.subscribe(actor.organizationId, {
      types: ['conversation.message'],
      accept: (event) => event.payload.conversationId === conversation.id,
    });
  }

  /**
   * Every event of an execution (SSE): live from now; `replayPage` replays what came before. `final`
   * is read after subscribing: when it is true, every event of the execution is already stored (its
   * final move and its event commit together), so the replay is the whole stream.
   */
  async executionStream(actor: Actor, executionId: string): Promise<{ executionId: string; final: boolean; stream: LiveStream<Event> }> {
    const stream = this.feed.subscribe(actor.organizationId, { accept: isExecutionEvent(executionId) });
    try {
      const execution = await this.ports.executions.get(actor, executionId);
      return { executionId: execution.id, final: FINAL_STATES.includes(execution.status), stream };
    } catch (error) {
      await stream.return();
      throw error;
    }
  }

  /** Where a replay after `afterId` starts: null (from the first kept event) when it is none of the organization's events. */
  async replayCursor(actor: Actor, afterId: string | null): Promise<ReplayCursor | null> {
    if (!afterId || !isUuid(afterId)) return null;
    const [after] = await query<ReplayCursor>(this.em.fork(), 'select created_at::text as created_at, id from events where id = ? and organization_id = ?', [
      afterId,
      actor.organizationId,
    ]);
    return after ?? null;
  }

  /**
   * One page of the execution's events after `after` (from the first kept one when null), oldest
   * first, as stored rows: one statement on the execution_id index, no entity hydrated. The
   * execution was checked by executionStream.
   */
  replayPage(actor: Actor, executionId: string, after: ReplayCursor | null): Promise<ReplayRow[]> {
    return query<ReplayRow>(this.em.fork(), replayPageSql(after !== null), [actor.organizationId, executionId, ...(after ? [after.created_at, after.id] : [])]);
  }

  /** A message of the organization's conversation, as `conversation(id).messages` shows it. */
  async message(actor: Actor, conversationId: string, messageId: string): Promise<Message> {
    const conversation = await this.ports.conversations.get(actor, conversationId);
    const message = isUuid(messageId)
      ? await this.em.findOne(Message, { id: messageId, conversation: conversation.id, organization: actor.organizationId })
      : null;
    if (!message) throw AppError.notFound('Message');
    return message;
  }
}
