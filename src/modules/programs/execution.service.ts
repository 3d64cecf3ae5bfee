import { countsAfterResume } from './runner/auto-pause.js';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager, QBFilterQuery } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { isUuid } from '../../db/base.entity.js';
import { pagesByParent } from '../../db/pages-by-parent.js';
import { readByIds, readJsonPage, readPage, type RowJson } from '../../db/read-model.js';
import { nestedRelation } from '../../db/nested-relation.js';
import { fixedOrderPage } from '../../db/keyset.js';
import { PageOnlyArgs, type JsonPage, type Page } from '../../common/pagination.js';
import { validArgs } from '../../common/validation.js';
import { Audience } from '../contacts/audience.entity.js';
import { audienceSource, withLiveCounts } from '../contacts/segments.js';
import { Organization } from '../organizations/organization.entity.js';
import { assertControl, type ControlAction } from './execution-state.js';
import { ExecutionEvents } from './execution-events.js';
import type { ExecutionSnapshots } from './execution-snapshot.js';
import { Execution } from './execution.entity.js';
import { Program } from './program.entity.js';
import { ExecutionStatus, ProgramKind, ProgramStatus } from './program.enums.js';
import type { CreateExecutionInput } from './program.inputs.js';
import { authorize } from '../organizations/roles.js';
import { CREDIT_BALANCE_SQL } from '../organizations/organization.entity.js';
import { releaseReservations } from './runner/credit-reservations.js';
import { missingExecutionVariables } from './execution-variables.js';
import { givenValues } from '../agents/templates/template-values.js';

/** Which executions of a program to read: a page, optionally of one status. */
export interface ExecutionPageArgs {
  page: number;
  limit: number;
  status?: ExecutionStatus | null;
  /** A cursor this list answered: the page is read by the (program_id, created_at, id) index from there. */
  cursor?: string | null;
}

/** How a program's executions are ordered: newest first (endpoint 9, Program.executions); as SQL for the batch, as properties for a page. */
const EXECUTION_ORDER = 'created_at desc, id desc';

/**
 * Program.executions: a program's page of executions, newest first, read with a programs page when its
 * selection asks for them (LIMIT per program on its program_id, created_at index), else batched by
 * pagesForPrograms. The field answers the rows alone (REST endpoint 9 too).
 */
export const programExecutions = nestedRelation<ExecutionPageArgs>({
  parent: Program,
  field: 'executions',
  entity: Execution,
  shape: 'list',
  argNames: ['status', 'page', 'limit', 'cursor'],
  async readArgs(raw) {
    // A cursor's page is read by the keyset (listForProgram), not by the per-parent OFFSET of this subquery.
    if (raw.cursor) return null;
    const page = await validArgs(PageOnlyArgs, { page: raw.page, limit: raw.limit });
    return page ? { status: (raw.status as ExecutionStatus | null | undefined) ?? null, page: page.page, limit: page.limit } : null;
  },
  source: (parent, organizationId, args) => ({
    from: 'from executions x',
    where: `x.program_id = ${parent}.id and x.organization_id = ?${args.status ? ' and x.status = ?' : ''}`,
    params: [organizationId, ...(args.status ? [args.status] : [])],
    order: 'x.created_at desc, x.id desc',
  }),
  derived: { audience: ['audienceId'], program: ['program'] },
});

/** Executions of programs of the caller's organization: create, read, control. */
export class ExecutionService {
  constructor(
    private readonly em: EntityManager,
    private readonly events: ExecutionEvents,
    private readonly snapshots: ExecutionSnapshots,
  ) {}

  /** Endpoint 9: a page of the program's executions, newest first, by page or cursor (REST answers the rows as an array). */
  async listForProgram(actor: Actor, programId: string, args: ExecutionPageArgs): Promise<Page<Execution>> {
    // One program's page is a plain page by its keyset (its cursors written), not a batch ranked per program.
    const { where, options } = this.programPage(actor, programId, args);
    const { rows, meta } = await readPage(this.em, Execution, where, options);
    return this.ofKnownProgram(actor, programId, { data: rows, meta });
  }

  /** The same page as `listForProgram`, each execution as the JSON text `row` builds (the REST door's answer). */
  async listForProgramJson(actor: Actor, programId: string, args: ExecutionPageArgs, row: RowJson): Promise<JsonPage> {
    const { where, options } = this.programPage(actor, programId, args);
    const { json, meta } = await readJsonPage(this.em, Execution, where, options, row);
    return this.ofKnownProgram(actor, programId, { json, meta });
  }

  private programPage(actor: Actor, programId: string, args: ExecutionPageArgs) {
    if (!isUuid(programId)) throw AppError.notFound('Program');
    const where: QBFilterQuery<Execution> = { organization: actor.organizationId, program: programId, ...(args.status ? { status: args.status } : {}) };
    return { where, options: fixedOrderPage<Execution>(args, 'createdAt', 'desc') };
  }

  /** `page`, once its program is known to be the caller's: an execution of the organization proves it; only an empty page asks. */
  private async ofKnownProgram<P extends { meta: { total: number } }>(actor: Actor, programId: string, page: P): Promise<P> {
    if (page.meta.total > 0) return page;
    if ((await this.em.count(Program, { id: programId, organization: actor.organizationId })) === 0) throw AppError.notFound('Program');
    return page;
  }

  /** A page of executions of each program, newest first, in one statement whatever the number of programs. */
  async pagesForPrograms(actor: Actor, programIds: readonly string[], args: ExecutionPageArgs): Promise<Map<string, Page<Execution>>> {
    if (args.cursor) {
      // A cursor belongs to one program's list: each program's page by its keyset.
      return new Map(await Promise.all(programIds.map(async (id) => [id, await this.listForProgram(actor, id, args)] as const)));
    }
    return pagesByParent(this.em, programIds, {
      entity: Execution,
      table: 'executions',
      parentColumn: 'program_id',
      columns: '*',
      orderBy: EXECUTION_ORDER,
      organizationId: actor.organizationId,
      filters: args.status ? [{ sql: 'status = ?', params: [args.status] }] : [],
      page: args.page,
      limit: args.limit,
    });
  }

  async get(actor: Actor, id: string): Promise<Execution> {
    const execution = isUuid(id) ? await this.em.findOne(Execution, { id, organization: actor.organizationId }) : null;
    if (!execution) throw AppError.notFound('Execution');
    return execution;
  }

  /** Programs by id, of the caller's organization, in one statement (Execution.program), as read objects like the audiences below. */
  async programsFor(actor: Actor, ids: readonly string[]): Promise<Map<string, Program>> {
    return readByIds(this.em, Program, actor.organizationId, ids);
  }

  /**
   * Audiences by id, of the caller's organization, with contactCount, in one statement: read objects
   * (answers only), as a list page reads them; a managed entity per audience of a page of programs'
   * executions was the largest part of the ORM's work in such a page.
   */
  async audiencesFor(actor: Actor, ids: readonly string[]): Promise<Map<string, Audience>> {
    const audiences = await readByIds(this.em, Audience, actor.organizationId, ids);
    await withLiveCounts(this.em, actor.organizationId, [...audiences.values()]);
    return audiences;
  }

  /**
   * A new execution of an active campaign program: the audience's contacts that have not opted out
   * are copied into its work queue, totalContacts counting them. The request copies the first chunk
   * (ExecutionSnapshots): an audience that fits is `scheduled` at once; a larger one is `preparing`
   * while the campaign runner copies the rest, then `scheduled`. The agents' variables are checked
   * against the contacts copied here (400), and against all of them again at start.
   */
  async create(actor: Actor, programId: string, input: CreateExecutionInput = {}): Promise<Execution> {
    authorize(actor, 'executions.control');
    const id = await this.events.transaction(this.em, async (em, record) => {
      const program = isUuid(programId)
        ? await em.findOne(Program, { id: programId, organization: actor.organizationId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true })
        : null;
      if (!program) throw AppError.notFound('Program');
      if (program.kind !== ProgramKind.campaign) throw new AppError('CONFLICT', 'A live program runs from its triggers; only a campaign starts executions');
      if (program.status !== ProgramStatus.active)
        throw new AppError('CONFLICT', `Only an active program can start an execution; this one is ${program.status}`);
      if (!program.audience) throw new AppError('CONFLICT', 'The program has no audience (it was deleted)');
      const execution = em.create(Execution, {
        organization: em.getReference(Organization, actor.organizationId),
        program,
        audienceId: program.audience.id,
        flowId: program.flow?.id ?? null,
        autoPauseRules: program.autoPauseRules.map((rule) => ({ ...rule })),
        scheduledStartAt: input.scheduledStartAt ?? program.scheduledStartAt,
        scheduledStopAt: program.scheduledStopAt,
        variables: givenValues(input.variables),
      });
      await em.flush();
      if (!(await audienceSource(em, actor.organizationId, program.audience.id)))
        throw new AppError('CONFLICT', 'The program has no audience (it was deleted)');
      const first = await this.snapshots.take(em, {
        id: execution.id,
        organizationId: actor.organizationId,
        audienceId: program.audience.id,
        snapshotAfter: null,
      });
      execution.totalContacts = first.added;
      execution.contactsPending = first.added;
      if (!first.done) {
        execution.status = ExecutionStatus.preparing;
        execution.snapshotAfter = first.last;
      }
      // Every contact's call must be able to fill its agents' templates: otherwise nothing is created.
      const missing = await missingExecutionVariables(em, actor.organizationId, execution.id, execution.variables);
      if (missing.length > 0) throw AppError.badInput(missing);
      await em.flush();
      record({ executionId: execution.id, programId: program.id, organizationId: actor.organizationId, from: null, to: execution.status, reason: 'user' });
      return execution.id;
    });
    return this.fresh(actor, id);
  }

  /**
   * A move a user asks for. The execution row is locked for the transaction, so the runner and a
   * user never move it at once. stop/cancel leave pending contacts pending (never dialed again).
   * start and resume are refused (409) while contacts wait and the organization has no credit:
   * the execution would only pause again at once. A resume from paused_threshold restarts the
   * node counts of rules with resetOnResume; a resume from another pause leaves every count as is.
   */
  async control(actor: Actor, id: string, action: ControlAction): Promise<Execution> {
    authorize(actor, 'executions.control');
    if (!isUuid(id)) throw AppError.notFound('Execution');
    let leftRunning = false;
    await this.events.transaction(this.em, async (em, record) => {
      leftRunning = false;
      // A move to running takes its program's lock first, then the execution's row (the order the
      // scheduler takes them in too), so two starts of one program's executions are decided one after the other.
      if (action === 'start' || action === 'resume') await lockRunningSlot(em, actor.organizationId, id);
      const execution = await em.findOne(Execution, { id, organization: actor.organizationId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (!execution) throw AppError.notFound('Execution');
      const from = execution.status;
      const to = assertControl(action, from, execution.id);
      if (to === ExecutionStatus.running) {
        await this.assertAloneRunning(em, execution);
        await this.assertCredits(em, actor, execution);
      }
      if (action === 'start') await this.assertVariables(em, actor, execution);
      const now = new Date();
      execution.status = to;
      if (action === 'start') execution.actualStartAt = now;
      if (to === ExecutionStatus.stopped || to === ExecutionStatus.cancelled) execution.actualEndAt = now;
      if (action === 'resume' && from === ExecutionStatus.paused_threshold) {
        execution.nodeCounts = countsAfterResume(execution.autoPauseRules, execution.nodeCounts);
      }
      execution.updatedAt = now;
      await em.flush();
      leftRunning = from === ExecutionStatus.running;
      record({ executionId: execution.id, programId: execution.program.id, organizationId: actor.organizationId, from, to, reason: 'user' });
    });
    // Paused or stopped: what runners reserved for it goes back to the organization now (a runner's tick would, later).
    if (leftRunning) await releaseReservations(this.em, { executionIds: [id] });
    return this.fresh(actor, id);
  }

  /**
   * 409 when another execution of the program is running: a program runs one execution at a time,
   * so that two runs never call the same contacts (held by a unique index too).
   */
  private async assertAloneRunning(em: EntityManager, execution: Execution): Promise<void> {
    const running = await em.findOne(
      Execution,
      { program: execution.program.id, status: ExecutionStatus.running, id: { $ne: execution.id } },
      { fields: ['id'] },
    );
    if (!running) return;
    throw new AppError(
      'CONFLICT',
      `Execution ${running.id} of this program is running, and a program runs one execution at a time so that no contact is called twice: ` +
        'stop it or wait for it to complete, then start this one',
    );
  }

  /** 409 naming every variable some contact would be called without (the contacts or the agents changed since the execution was created). */
  private async assertVariables(em: EntityManager, actor: Actor, execution: Execution): Promise<void> {
    const missing = await missingExecutionVariables(em, actor.organizationId, execution.id, execution.variables);
    if (missing.length === 0) return;
    throw new AppError(
      'CONFLICT',
      `${missing.length === 1 ? 'A variable' : `${missing.length} variables`} of the agents would have no value on some calls: ${missing.map((error) => error.message).join('; ')}`,
      missing,
    );
  }

  /** 409 naming the credits missing when contacts wait to be called and not one call can be paid for. */
  private async assertCredits(em: EntityManager, actor: Actor, execution: Execution): Promise<void> {
    if (execution.contactsPending === 0) return;
    const [row] = await em.execute<{ credit_balance: number }[]>(
      `select ${CREDIT_BALANCE_SQL('organizations')} as credit_balance from organizations where id = ?`,
      [actor.organizationId],
    );
    const balance = Number(row?.credit_balance ?? 0);
    if (balance >= 1) return;
    const waiting = execution.contactsPending;
    throw new AppError(
      'CONFLICT',
      `The organization has ${balance} credits: each call costs 1 credit and ${waiting} contact${waiting === 1 ? ' is' : 's are'} still to call, ` +
        `so at least 1 credit is missing (${waiting} to call them all). Credits are granted by the operator: npm run cli -- credits:add --org ${actor.organizationId} --amount <n>`,
    );
  }

  private async fresh(actor: Actor, id: string): Promise<Execution> {
    const execution = await this.em.findOne(Execution, { id, organization: actor.organizationId }, { refresh: true });
    if (!execution) throw AppError.notFound('Execution');
    return execution;
  }
}

/** The advisory lock every move of a program's execution to running takes (user moves and the scheduler), by program. */
export async function lockProgramRuns(em: EntityManager, programId: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`running-execution:${programId}`]);
}

/** lockProgramRuns for the program of an execution of the organization (nothing when there is no such execution: the caller answers 404). */
async function lockRunningSlot(em: EntityManager, organizationId: string, executionId: string): Promise<void> {
  const [row] = await em.execute<{ program_id: string }[]>('select program_id from executions where id = ? and organization_id = ?', [
    executionId,
    organizationId,
  ]);
  if (row) await lockProgramRuns(em, row.program_id);
}
