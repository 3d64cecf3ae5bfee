import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../../common/actor.js';
import { AppError } from '../../../common/errors.js';
import { isUuid } from '../../../db/base.entity.js';
import { Message } from '../../agents/message.entity.js';
import type { ConversationService } from '../../agents/conversation.service.js';
import type { ExecutionService } from '../../programs/execution.service.js';
import type { ProgramService } from '../../programs/program.service.js';
import { query } from '../../programs/runner/sql.js';
import { Event } from '../event.entity.js';
import { EVENT_TYPES } from '../event.types.js';
import { LiveFeed, type LiveStream } from './live-feed.js';
import { LiveConnections } from '../../../platform/live-connections.js';

/** Events read per statement when an SSE stream replays what it missed. */
export const REPLAY_BATCH = 500;

/** An execution's events: its own moves and progress (`execution.*`), and the calls and triggers that name it. */
export function isExecutionEvent(executionId: string): (event: Event) => boolean {
  return (event) =>
    (event.type.startsWith('execution.') && event.payload.id === executionId) || event.payload.executionId === executionId;
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
  ) {}

  /** `events(types)`: every event of the organization, of these types (none: all). */
  async events(actor: Actor, types: readonly string[] | null | undefined): Promise<LiveStream<Event>> {
    const known = checkEventTypes(types, 'types');
    return this.feed.subscribe(actor.organizationId, { types: known });
  }

  /** An execution's moves and progress. */
  async execution(actor: Actor, executionId: string): Promise<LiveStream<Event>> {
    const execution = await this.ports.executions.get(actor, executionId);
    return this.feed.subscribe(actor.organizationId, {
      accept: (event) => event.type.startsWith('execution.') && event.payload.id === execution.id,
    });
  }

  /** The moves and progress of every execution of a program. */
  async programExecutions(actor: Actor, programId: string): Promise<LiveStream<Event>> {
    const program = await this.ports.programs.get(actor, programId);
    return this.feed.subscribe(actor.organizationId, {
      accept: (event) => event.type.startsWith('execution.') && event.payload.programId === program.id,
    });
  }

  /** The calls of an execution as they start and end. */
  async executionCalls(actor: Actor, executionId: string): Promise<LiveStream<Event>> {
    const execution = await this.ports.executions.get(actor, executionId);
    return this.feed.subscribe(actor.organizationId, {
      types: ['call.started', 'call.ended'],
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

  /** Every event of an execution (SSE): live from now; `executionEvents` replays what came before. */
  async executionStream(actor: Actor, executionId: string): Promise<{ executionId: string; stream: LiveStream<Event> }> {
    const execution = await this.ports.executions.get(actor, executionId);
    return { executionId: execution.id, stream: this.feed.subscribe(actor.organizationId, { accept: isExecutionEvent(execution.id) }) };
  }

  /**
   * The execution's events after `afterId` (all that are kept when it is null or not one of the
   * organization's events), oldest first, a page at a time; the execution was checked by executionStream.
   */
  async *executionEvents(actor: Actor, executionId: string, afterId: string | null): AsyncGenerator<Event[]> {
    const em = this.em.fork();
    let after: { created_at: string; id: string } | undefined;
    if (afterId && isUuid(afterId)) {
      [after] = await query<{ created_at: string; id: string }>(
        em,
        'select created_at::text as created_at, id from events where id = ? and organization_id = ?',
        [afterId, actor.organizationId],
      );
    }
    for (;;) {
      const rows = await query<{ id: string; created_at: string }>(
        em,
        `select id, created_at::text as created_at from events
          where organization_id = ?
            and ((type like 'execution.%' and payload->>'id' = ?) or payload->>'executionId' = ?)
            ${after ? 'and (created_at, id) > (?::timestamptz, ?::uuid)' : ''}
          order by created_at, id limit ${REPLAY_BATCH}`,
        [actor.organizationId, executionId, executionId, ...(after ? [after.created_at, after.id] : [])],
      );
      if (rows.length === 0) return;
      const ids = rows.map((row) => row.id);
      const events = await em.fork().find(Event, { id: { $in: ids }, organization: actor.organizationId });
      const byId = new Map(events.map((event) => [event.id, event]));
      const page = ids.map((id) => byId.get(id)).filter((event): event is Event => event !== undefined);
      yield page;
      if (rows.length < REPLAY_BATCH) return;
      after = rows[rows.length - 1]!;
    }
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
