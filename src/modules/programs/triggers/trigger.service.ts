import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../../common/actor.js';
import { AppError } from '../../../common/errors.js';
import { isUuid } from '../../../db/base.entity.js';
import { pagesByParent } from '../../../db/pages-by-parent.js';
import { nestedRelation } from '../../../db/nested-relation.js';
import { fixedOrderPage } from '../../../db/keyset.js';
import { readList } from '../../../db/read-model.js';
import { validArgs } from '../../../common/validation.js';
import { TriggerListArgs } from './trigger.args.js';
import type { Page } from '../../../common/pagination.js';
import { ContactTrigger } from '../contact-trigger.entity.js';
import { Program } from '../program.entity.js';
import { ProgramKind, TriggerStatus } from '../program.enums.js';
import { ExecutionEvents } from '../execution-events.js';
import { fireDueTriggers, type FireResult } from './trigger-fire.js';
import { syncTriggers } from './trigger-sync.js';
import type { TriggerSync } from './trigger.types.js';
import { authorize } from '../../organizations/roles.js';

export type { FireResult } from './trigger-fire.js';

/** Which triggers of a program to read: a page, optionally of one status. */
export interface TriggerPageArgs {
  page: number;
  limit: number;
  status?: TriggerStatus | null;
  /** A cursor this list answered: the page is read by the (program_id, trigger_at, id) index from there. */
  cursor?: string | null;
}

/**
 * Program.triggers: a live program's page of triggers by triggerAt (none for a campaign), read with a
 * programs page when its selection asks for them, else batched by triggersFor (the same filter: the
 * batch asks the programs table for the program's kind, the read path reads it from the program's row).
 */
export const programTriggers = nestedRelation<TriggerPageArgs>({
  parent: Program,
  field: 'triggers',
  entity: ContactTrigger,
  shape: 'list',
  argNames: ['status', 'page', 'limit', 'cursor'],
  // A cursor's page is read by the keyset (TriggerService.list), not by the per-parent OFFSET of this subquery.
  readArgs: async (raw) => (raw.cursor ? null : validArgs(TriggerListArgs, raw)),
  source: (parent, organizationId, args) => ({
    from: 'from contact_triggers x',
    where: `x.program_id = ${parent}.id and x.organization_id = ? and ${parent}.kind = ?${args.status ? ' and x.status = ?' : ''}`,
    params: [organizationId, ProgramKind.live, ...(args.status ? [args.status] : [])],
    order: 'x.trigger_at asc, x.id asc',
  }),
});

/** Live programs' contact triggers: kept in line with audiences and contacts, fired by the runner. */
export class TriggerService {
  constructor(
    private readonly em: EntityManager,
    private readonly events: ExecutionEvents,
  ) {}

  /** Endpoint 8: a page of a program's triggers by triggerAt; empty for a campaign program; another organization's program → 404. */
  async list(actor: Actor, programId: string, args: TriggerPageArgs): Promise<Page<ContactTrigger>> {
    const program = await this.findProgram(actor, programId);
    // One program's page by its keyset (its cursors written); a campaign program has none.
    return readList(this.em, {
      entity: ContactTrigger,
      where:
        program.kind === ProgramKind.live
          ? { organization: actor.organizationId, program: program.id, ...(args.status ? { status: args.status } : {}) }
          : { organization: actor.organizationId, id: { $in: [] } },
      options: fixedOrderPage<ContactTrigger>(args, 'triggerAt', 'asc'),
      page: args.page,
      limit: args.limit,
    });
  }

  /** A page of triggers of each of many programs of the caller, in one statement (the Program.triggers loader). */
  async triggersFor(actor: Actor, programIds: readonly string[], args: TriggerPageArgs): Promise<Map<string, Page<ContactTrigger>>> {
    if (args.cursor) {
      // A cursor belongs to one program's list: each program's page by its keyset.
      return new Map(await Promise.all(programIds.map(async (id) => [id, await this.list(actor, id, args)] as const)));
    }
    return pagesByParent(this.em, programIds, {
      entity: ContactTrigger,
      table: 'contact_triggers',
      parentColumn: 'program_id',
      columns: '*',
      orderBy: 'trigger_at asc, id asc',
      organizationId: actor.organizationId,
      filters: [
        { sql: 'program_id in (select id from programs where kind = ?)', params: [ProgramKind.live] },
        ...(args.status ? [{ sql: 'status = ?', params: [args.status] }] : []),
      ],
      page: args.page,
      limit: args.limit,
    });
  }

  /** The operator's resync (REST POST /api/programs/{id}/triggers/sync, GraphQL syncProgramTriggers). */
  async sync(actor: Actor, programId: string): Promise<TriggerSync> {
    authorize(actor, 'programs.manage');
    const program = await this.findProgram(actor, programId);
    return this.syncProgram(this.em, program.id);
  }

  /**
   * Makes a program's triggers match its audience now: one per (contact, date value), pending
   * ones cancelled for contacts that left, opted out, were removed or changed the value. A program
   * that is not live and active keeps no pending trigger. Call it when a program is activated or
   * its trigger or audience changes.
   */
  async syncProgram(em: EntityManager, programId: string, now = new Date()): Promise<TriggerSync> {
    return em.transactional(async (tx) => {
      const program = await tx.findOneOrFail(Program, { id: programId });
      const counts = await syncTriggers(tx, program, now);
      const pending = await tx.count(ContactTrigger, { program: program.id, status: TriggerStatus.pending });
      return { programId: program.id, ...counts, pending, program };
    });
  }

  /** After a contact, or one of its business entities, is created, updated, opted out or deleted: its triggers in every live program of the organization. */
  async syncContact(em: EntityManager, organizationId: string, contactId: string, now = new Date()): Promise<void> {
    await em.transactional(async (tx) => {
      for (const program of await this.programsToSync(tx, organizationId)) await syncTriggers(tx, program, now, contactId);
    });
  }

  /** After an audience's members change or it is deleted: every live program over it (or left with none). */
  async syncAudience(em: EntityManager, organizationId: string, audienceId: string, now = new Date()): Promise<void> {
    await em.transactional(async (tx) => {
      for (const program of await this.programsToSync(tx, organizationId)) {
        if (!program.audience || program.audience.id === audienceId) await syncTriggers(tx, program, now);
      }
    });
  }

  /**
   * The runner's tick: claims up to 500 due pending triggers (SKIP LOCKED: replicas never share
   * one), marks them triggered at `now` and queues their contacts into each program's live
   * execution, counters and rows in one transaction. Call again while it reports a full batch.
   */
  async fireDue(now: Date = new Date()): Promise<FireResult> {
    return fireDueTriggers(this.em.fork(), now, this.events);
  }

  /** The organization's live programs (inactive ones too: their pending triggers are cancelled), in id order. */
  private programsToSync(em: EntityManager, organizationId: string): Promise<Program[]> {
    return em.find(Program, { organization: organizationId, kind: ProgramKind.live }, { orderBy: { id: 'asc' } });
  }

  private async findProgram(actor: Actor, programId: string): Promise<Program> {
    const program = isUuid(programId) ? await this.em.findOne(Program, { id: programId, organization: actor.organizationId }) : null;
    if (!program) throw AppError.notFound('Program');
    return program;
  }
}
