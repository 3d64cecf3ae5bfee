import { listCount } from '../../db/list-counts.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sortedPage } from '../../db/keyset.js';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { containsPattern, sortField, type Page, type JsonPage } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { type ListRead, readJsonList, readList, type RowJson } from '../../db/read-model.js';
import { query } from '../../db/sql.js';
import type { EventListArgs } from './event.args.js';
import { Event } from './event.entity.js';

/** How far the runner's clock (a call's created_at) may run ahead of the database's (its events' created_at). */
const CLOCK_SKEW_MS = 60 * 60 * 1000;

export const EVENT_SORT_FIELDS = ['createdAt'] as const;

/** Rows deleted per statement by retention, so one tick never holds a long lock. */
export const RETENTION_BATCH = 1000;

/** The organization's events, read only: every module writes them through the EventWriter. */
export class EventService {
  constructor(private readonly em: EntityManager) {}

  /** A page of events, newest first by default; `search` matches the type. */
  async list(actor: Actor, args: EventListArgs): Promise<Page<Event>> {
    return readList(this.em, await this.listRead(actor, args));
  }

  /** The same page as `list`, each row as the JSON text `row` builds (the REST door's answer, src/rest/present-sql.ts). */
  async listJson(actor: Actor, args: EventListArgs, row: RowJson): Promise<JsonPage> {
    return readJsonList(this.em, await this.listRead(actor, args), row);
  }

  /** What a page of `list` reads. */
  private async listRead(actor: Actor, args: EventListArgs): Promise<ListRead<Event>> {
    const field = sortField(args.sortBy, EVENT_SORT_FIELDS);
    if (args.createdAfter && args.createdBefore && args.createdAfter >= args.createdBefore) {
      throw AppError.badInput([{ field: 'createdBefore', message: 'createdBefore must be after createdAfter' }]);
    }
    const call = args.callId ? await this.callFilter(actor, args.callId) : undefined;
    // A call's events are all written after it was created: that bound keeps the read on the (organization, createdAt) index.
    // The call's created_at is the runner's clock and an event's the database's (clock_timestamp()), so the bound
    // leaves an hour for the two clocks to disagree (a runner's clock a minute ahead hid every event of its calls).
    const after = [args.createdAfter, call?.createdAt && new Date(call.createdAt.getTime() - CLOCK_SKEW_MS)].filter(
      (date): date is Date => date instanceof Date,
    );
    const createdAt = {
      ...(after.length > 0 ? { $gte: new Date(Math.max(...after.map((date) => date.getTime()))) } : {}),
      ...(args.createdBefore ? { $lt: args.createdBefore } : {}),
    };
    const type = {
      ...(args.type && args.type.length > 0 ? { $in: args.type } : {}),
      ...(args.search ? { $ilike: containsPattern(args.search) } : {}),
    };
    const where = {
      organization: actor.organizationId,
      ...(Object.keys(type).length > 0 ? { type } : {}),
      ...(Object.keys(createdAt).length > 0 ? { createdAt } : {}),
      ...(call ? call.where : {}),
    };
    return {
      entity: Event,
      where: where as never,
      // Unfiltered it is every event of the organization: its size is kept by triggers (list_row_counts), not counted.
      options: { ...sortedPage<Event>(args, field), ...(Object.keys(where).length === 1 ? { count: listCount('events', actor.organizationId) } : {}) },
      page: args.page,
      limit: args.limit,
    };
  }

  /**
   * The filter of `callId`: events whose payload is the call (call.*) or names it. A call of another
   * organization, or none, matches nothing, as the calls list's filters do.
   */
  private async callFilter(actor: Actor, callId: string): Promise<{ createdAt?: Date; where: object }> {
    const [call] = await query<{ created_at: Date | string }>(this.em, 'select created_at from calls where id = ? and organization_id = ?', [
      callId,
      actor.organizationId,
    ]);
    if (!call) return { where: { id: { $in: [] } } };
    return {
      createdAt: new Date(call.created_at),
      where: { $or: [{ type: { $like: 'call.%' }, payload: { id: callId } }, { payload: { callId } }] },
    };
  }

  async get(actor: Actor, id: string): Promise<Event> {
    const event = isUuid(id) ? await this.em.findOne(Event, { id, organization: actor.organizationId }) : null;
    if (!event) throw AppError.notFound('Event');
    return event;
  }

  /** Deletes events created before `before`, a batch per statement, until none is left; the number deleted. */
  async deleteOlderThan(before: Date): Promise<number> {
    let deleted = 0;
    for (;;) {
      const rows = await query(
        this.em.fork(),
        'delete from events where id in (select id from events where created_at < ?::timestamptz limit ?) returning id',
        [before.toISOString(), RETENTION_BATCH],
      );
      deleted += rows.length;
      if (rows.length < RETENTION_BATCH) return deleted;
    }
  }
}
