import { listCount } from '../../db/list-counts.js';
import { QueryOrder } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { fixedOrderPage, sortedPage } from '../../db/keyset.js';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { containsPattern, pageMeta, sortField, type Page } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { pagesByParent } from '../../db/pages-by-parent.js';
import { readPage } from '../../db/read-model.js';
import { nestedRelation } from '../../db/nested-relation.js';
import { validArgs } from '../../common/validation.js';
import { Contact } from '../contacts/contact.entity.js';
import { Conversation } from '../agents/conversation.entity.js';
import { Execution } from '../programs/execution.entity.js';
import { Call } from './call.entity.js';
import { CallPageArgs, type CallListArgs } from './call.args.js';
import { analysisColumns, type AnalysisColumns, type CallCsvRow } from './call-csv.js';
import type { StoredAnalysis } from '../agents/analysis/analysis.types.js';
import { Agent } from '../agents/agent.entity.js';
import { Program } from '../programs/program.entity.js';
import type { StoredTransfer } from './call-transfer.types.js';

export const CALL_SORT_FIELDS = ['createdAt', 'updatedAt', 'queuedAt', 'endedAt', 'durationSeconds'] as const;
const NULLABLE_SORT_FIELDS = new Set<string>(['endedAt', 'durationSeconds']);

/**
 * Contact.calls: the calls to (or from) a contact, newest first, read with a contacts page when its
 * selection asks for them (LIMIT per contact), else batched by pagesForContacts (the same filter and order).
 */
export const contactCalls = nestedRelation<CallPageArgs>({
  parent: Contact,
  field: 'calls',
  entity: Call,
  shape: 'page',
  argNames: ['status', 'page', 'limit', 'cursor'],
  // A cursor's page is read by the keyset (pagesForContacts), not by the per-parent OFFSET of this subquery.
  readArgs: async (raw) => (raw.cursor ? null : validArgs(CallPageArgs, raw)),
  source: (parent, organizationId, args) => ({
    from: 'from calls x',
    where: `x.contact_id = ${parent}.id and x.organization_id = ?${args.status ? ' and x.status = ?' : ''}`,
    params: [organizationId, ...(args.status ? [args.status] : [])],
    order: 'x.created_at desc, x.id desc',
  }),
  cursors: true,
});

/** The CSV's transfer columns of a last call: the destination's name, its number or URI, when, and how the dial ended. */
function transferCells(transfer: StoredTransfer | null) {
  return {
    transferredTo: transfer?.destinationName ?? null,
    transferDestination: transfer?.destination ?? null,
    transferredAt: transfer ? asDate(transfer.transferredAt) : null,
    transferDialStatus: transfer?.dialStatus ?? null,
  };
}

/** Rows of the CSV read per statement: the answer is written page by page, never held whole. */
export const CSV_BATCH_SIZE = 500;

/**
 * One contact of the execution with its last call (highest attempt, then latest queuedAt). A call
 * belongs to the queue row it names, or, naming none, to the row of its contact.
 */
const LAST_CALL_COLUMNS =
  'c.id, c.status, c.outcome, c.attempt, c.queued_at, c.answered_at, c.ended_at, c.duration_seconds, c.first_audio_ms, c.error_text, c.credits_charged, c.analysis, c.conversation_id, c.transfer';
const LAST_CALL_ORDER = 'order by c.attempt desc, c.queued_at desc, c.id desc limit 1';
// Two lookups, each on its own index (execution_contact_id; execution_id, contact_id), rather than one OR that scans.
const CSV_SQL = `select ec.id as row_id, ec.contact_id, (select ct.name from contacts ct where ct.id = ec.contact_id) as contact_name, ec.phone, ec.status as contact_status, ec.attempts,
    last.id as call_id, last.status as call_status, last.outcome, last.queued_at, last.answered_at, last.ended_at,
    last.duration_seconds, last.first_audio_ms, last.error_text, last.credits_charged, last.analysis, last.transfer,
    (select v.tool_call_count from conversations v where v.id = last.conversation_id) as tool_calls
  from (
    select id, organization_id, execution_id, contact_id, phone, status, attempts from execution_contacts
    where organization_id = ? and execution_id = ? and id > ? order by id limit ?
  ) ec
  left join lateral (
    select * from (
      (select ${LAST_CALL_COLUMNS} from calls c
        where c.execution_contact_id = ec.id and c.organization_id = ec.organization_id and c.execution_id = ec.execution_id ${LAST_CALL_ORDER})
      union all
      (select ${LAST_CALL_COLUMNS} from calls c
        where c.execution_id = ec.execution_id and c.contact_id = ec.contact_id and c.execution_contact_id is null and c.organization_id = ec.organization_id ${LAST_CALL_ORDER})
    ) candidates
    order by attempt desc, queued_at desc, id desc
    limit 1
  ) last on true
  order by ec.id`;

const asDate = (value: unknown): Date | null => (value === null || value === undefined ? null : value instanceof Date ? value : new Date(String(value)));
const asNumber = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/** Calls of the caller's organization, read only: the runner and the carrier webhooks write them. */
export class CallService {
  constructor(private readonly em: EntityManager) {}

  /** A page of calls, newest first by default; filter ids of other organizations match nothing. */
  async list(actor: Actor, args: CallListArgs): Promise<Page<Call>> {
    const field = sortField(args.sortBy, CALL_SORT_FIELDS);
    if (args.queuedAfter && args.queuedBefore && args.queuedAfter >= args.queuedBefore) {
      throw AppError.badInput([{ field: 'queuedBefore', message: 'queuedBefore must be after queuedAfter' }]);
    }
    const queuedAt = {
      ...(args.queuedAfter ? { $gte: args.queuedAfter } : {}),
      ...(args.queuedBefore ? { $lt: args.queuedBefore } : {}),
    };
    const pattern = args.search ? containsPattern(args.search) : undefined;
    const where = {
      organization: actor.organizationId,
      ...(args.executionId ? { executionId: args.executionId } : {}),
      ...(args.programId ? { programId: args.programId } : {}),
      ...(args.contactId ? { contactId: args.contactId } : {}),
      ...(args.status ? { status: args.status } : {}),
      ...(args.outcome ? { outcome: args.outcome } : {}),
      ...(args.direction ? { direction: args.direction } : {}),
      ...(Object.keys(queuedAt).length > 0 ? { queuedAt } : {}),
      ...(pattern ? { $or: [{ to: { $ilike: pattern } }, { from: { $ilike: pattern } }] } : {}),
    };
    const desc = args.sortOrder === 'desc';
    const order = NULLABLE_SORT_FIELDS.has(field) ? (desc ? QueryOrder.DESC_NULLS_LAST : QueryOrder.ASC_NULLS_LAST) : args.sortOrder;
    // A nullable sort field orders its nulls last both ways, which the keyset does not page: by page only.
    if (NULLABLE_SORT_FIELDS.has(field) && args.cursor) throw AppError.badInput([{ field: 'cursor', message: `sortBy=${field} pages by page and limit only` }]);
    const paging = NULLABLE_SORT_FIELDS.has(field)
      ? { orderBy: [{ [field]: order }, { id: desc ? 'desc' : 'asc' }] as never, limit: args.limit, offset: (args.page - 1) * args.limit }
      : sortedPage<Call>(args, field);
    // The organization's calls, or one execution's, unfiltered: their size is kept by triggers (list_row_counts), not counted.
    const filters = Object.keys(where).filter((key) => key !== 'organization');
    const count =
      filters.length === 0
        ? listCount('calls', actor.organizationId)
        : filters.length === 1 && args.executionId
          ? listCount('calls.execution', actor.organizationId, args.executionId)
          : undefined;
    const { rows: data, meta } = await readPage(this.em, Call, where as never, { ...paging, ...(count ? { count } : {}) });
    return { data, meta };
  }

  async get(actor: Actor, id: string): Promise<Call> {
    const call = isUuid(id) ? await this.em.findOne(Call, { id, organization: actor.organizationId }) : null;
    if (!call) throw AppError.notFound('Call');
    return call;
  }

  /** A page of calls of each execution, newest first, in one statement whatever the number of executions. */
  pagesForExecutions(actor: Actor, executionIds: readonly string[], args: CallPageArgs): Promise<Map<string, Page<Call>>> {
    return this.pagesBy(actor, 'execution_id', executionIds, args);
  }

  /** A page of calls of each contact, newest first, in one statement whatever the number of contacts. */
  pagesForContacts(actor: Actor, contactIds: readonly string[], args: CallPageArgs): Promise<Map<string, Page<Call>>> {
    return this.pagesBy(actor, 'contact_id', contactIds, args);
  }

  /** Executions by id, of the caller's organization, in one statement (Call.execution). */
  async executionsFor(actor: Actor, ids: readonly string[]): Promise<Map<string, Execution>> {
    const executions = await this.em.find(Execution, { organization: actor.organizationId, id: { $in: ids.filter(isUuid) } });
    return new Map(executions.map((execution) => [execution.id, execution]));
  }

  /** Contacts by id, of the caller's organization, in one statement (Call.contact). */
  async contactsFor(actor: Actor, ids: readonly string[]): Promise<Map<string, Contact>> {
    const contacts = await this.em.find(Contact, { organization: actor.organizationId, id: { $in: ids.filter(isUuid) } });
    return new Map(contacts.map((contact) => [contact.id, contact]));
  }

  /** Conversations by id, of the actor's organization, in one statement (Call.conversation). */
  async conversationsFor(actor: Actor, ids: readonly string[]): Promise<Map<string, Conversation>> {
    const found = await this.em.find(Conversation, { organization: actor.organizationId, id: { $in: ids.filter(isUuid) } });
    return new Map(found.map((conversation) => [conversation.id, conversation]));
  }

  /** Calls by id, of the actor's organization, in one statement (Conversation.call). */
  async callsFor(actor: Actor, ids: readonly string[]): Promise<Map<string, Call>> {
    const found = await this.em.find(Call, { organization: actor.organizationId, id: { $in: ids.filter(isUuid) } });
    return new Map(found.map((call) => [call.id, call]));
  }

  /** The execution of the CSV export, checked before a byte is sent (another organization's → 404). */
  async csvExecution(actor: Actor, executionId: string): Promise<Execution> {
    const execution = isUuid(executionId) ? await this.em.findOne(Execution, { id: executionId, organization: actor.organizationId }) : null;
    if (!execution) throw AppError.notFound('Execution');
    return execution;
  }

  /**
   * The CSV's analysis columns: from the current analysis plans of the execution's program's agents
   * (its agent, then those of its flow's nodes in order), so the header is known before a row is read.
   */
  async csvAnalysisColumns(actor: Actor, execution: Execution): Promise<AnalysisColumns | null> {
    const program = await this.em.findOne(Program, { id: execution.program.id, organization: actor.organizationId }, { populate: ['flow'] });
    if (!program) return null;
    const ids = [
      ...new Set(
        [program.agent?.id, ...(program.flow?.nodes ?? []).map((node) => node.agentId)].filter((id): id is string => typeof id === 'string' && isUuid(id)),
      ),
    ];
    if (ids.length === 0) return null;
    const agents = new Map((await this.em.find(Agent, { organization: actor.organizationId, id: { $in: ids } })).map((agent) => [agent.id, agent]));
    return analysisColumns(ids.map((id) => agents.get(id)?.analysisPlan));
  }

  /**
   * The execution's contacts with their last calls, CSV_BATCH_SIZE rows per statement (keyset on the
   * queue row's id), so that memory stays flat whatever the execution's size. Statements go through
   * the request's EntityManager: once its client has gone, no further one starts. The page of queue
   * rows is taken first, so each statement looks up the last calls of its own rows only.
   */
  async *csvRows(actor: Actor, executionId: string): AsyncGenerator<CallCsvRow[]> {
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows = await this.em.execute<Record<string, unknown>[]>(CSV_SQL, [actor.organizationId, executionId, after, CSV_BATCH_SIZE] as never[]);
      if (rows.length === 0) return;
      yield rows.map((row) => ({
        contactId: (row.contact_id as string | null) ?? null,
        // The contact's name as it is now (null for a contact deleted since, or without one).
        contactName: (row.contact_name as string | null) ?? null,
        phone: row.phone as string,
        contactStatus: row.contact_status as string,
        attempts: asNumber(row.attempts),
        lastCallId: (row.call_id as string | null) ?? null,
        lastCallStatus: (row.call_status as string | null) ?? null,
        outcome: (row.outcome as string | null) ?? null,
        queuedAt: asDate(row.queued_at),
        answeredAt: asDate(row.answered_at),
        endedAt: asDate(row.ended_at),
        durationSeconds: asNumber(row.duration_seconds),
        firstAudioMs: asNumber(row.first_audio_ms),
        errorText: (row.error_text as string | null) ?? null,
        creditsCharged: asNumber(row.credits_charged),
        // How many tools the agent called on the last call (its conversation's count); null without a conversation.
        toolCalls: asNumber(row.tool_calls),
        analysis: (typeof row.analysis === 'string' ? JSON.parse(row.analysis) : row.analysis) as StoredAnalysis | null,
        ...transferCells((typeof row.transfer === 'string' ? JSON.parse(row.transfer) : row.transfer) as StoredTransfer | null),
      }));
      if (rows.length < CSV_BATCH_SIZE) return;
      after = String(rows[rows.length - 1]!.row_id);
    }
  }

  private async pagesBy(
    actor: Actor,
    parentColumn: 'execution_id' | 'contact_id',
    parentIds: readonly string[],
    args: CallPageArgs,
  ): Promise<Map<string, Page<Call>>> {
    if (args.cursor) {
      // A cursor belongs to one parent's list: each parent's page by its keyset (an execution's on (execution_id, created_at, id)).
      const property = parentColumn === 'execution_id' ? 'executionId' : 'contactId';
      const ids = parentIds.filter(isUuid);
      const read = new Map(
        await Promise.all(
          ids.map(async (id) => {
            const where = { organization: actor.organizationId, [property]: id, ...(args.status ? { status: args.status } : {}) };
            const { rows: data, meta } = await readPage(this.em, Call, where as never, fixedOrderPage<Call>(args, 'createdAt', 'desc'));
            return [id, { data, meta }] as const;
          }),
        ),
      );
      return new Map(parentIds.map((id) => [id, read.get(id) ?? { data: [], meta: pageMeta(args.page, args.limit, 0) }]));
    }
    return pagesByParent(this.em, parentIds, {
      entity: Call,
      table: 'calls',
      parentColumn,
      columns: '*',
      orderBy: 'created_at desc, id desc',
      organizationId: actor.organizationId,
      filters: args.status ? [{ sql: 'status = ?', params: [args.status] }] : [],
      page: args.page,
      limit: args.limit,
      keyset: { field: 'createdAt', order: 'desc' },
      // An execution's calls, unfiltered: the kept total, as the REST list reads it (list()).
      ...(parentColumn === 'execution_id' ? { keptTotals: 'calls.execution' as const } : {}),
    });
  }
}
