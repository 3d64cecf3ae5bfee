import type { EntityManager } from '@mikro-orm/postgresql';
import { query } from '../../db/sql.js';
import { audienceSource, memberCondition } from '../contacts/segments.js';
import type { ExecutionEvents } from './execution-events.js';
import { ExecutionStatus } from './program.enums.js';

/** Contacts copied into an execution's work queue per statement: the create request copies the first chunk, the runner the rest. */
export const SNAPSHOT_CHUNK = 5000;
/** Preparing executions looked at per tick. */
const EXECUTIONS_PER_TICK = 10;

/** What an execution's snapshot needs: its audience and where the last chunk ended (contact ids in order). */
export interface SnapshotTarget {
  id: string;
  organizationId: string;
  audienceId: string | null;
  snapshotAfter: string | null;
}

/**
 * An execution's snapshot of its audience (the contacts that may be called, its members or whoever its
 * filter matches), copied into execution_contacts a chunk at a time in contact-id order. A small audience
 * is copied by the create request (one chunk) and the execution is `scheduled` at once; a larger one is
 * `preparing` and the campaign runner copies the rest, each chunk with its counts and its cursor in one
 * transaction, so a stop anywhere resumes at the next contact, nothing copied twice; then `scheduled`.
 */
export class ExecutionSnapshots {
  /** Contacts per chunk (tests and the bench make it small or large). */
  chunk = SNAPSHOT_CHUNK;
  /** Chunks one preparing execution gets per runner tick, so that a large audience does not hold a tick (other executions' calls) long. */
  chunksPerTick = 10;

  constructor(
    private readonly em: EntityManager,
    private readonly events: ExecutionEvents,
  ) {}

  /**
   * The next chunk of `target`'s audience into its work queue, in the caller's transaction: how many
   * contacts it added, the last contact's id, and whether the audience is all copied (fewer than a chunk,
   * or its audience is gone). The execution's counters are the caller's to move.
   */
  async take(em: EntityManager, target: SnapshotTarget): Promise<{ added: number; last: string | null; done: boolean }> {
    const source = target.audienceId ? await audienceSource(em, target.organizationId, target.audienceId) : null;
    if (!source) return { added: 0, last: target.snapshotAfter, done: true };
    const membership = memberCondition(source);
    const [row] = await query<{ added: number; last: string | null }>(
      em,
      `with added as (
         insert into execution_contacts
           (id, created_at, updated_at, organization_id, execution_id, contact_id, phone, time_zone, status, attempts, reached_node_ids)
         select gen_random_uuid(), now(), now(), c.organization_id, ?, c.id, c.phone, c.time_zone, 'pending', 0, '[]'::jsonb
           from contacts c
          where c.organization_id = ? and c.opted_out = false and ${membership.sql('c')} and (?::uuid is null or c.id > ?::uuid)
          order by c.id limit ?
         returning contact_id)
       select count(*)::int as added, max(contact_id::text collate "C") as last from added`,
      [target.id, target.organizationId, ...membership.params, target.snapshotAfter, target.snapshotAfter, this.chunk],
    );
    const added = Number(row?.added ?? 0);
    return { added, last: row?.last ?? target.snapshotAfter, done: added < this.chunk };
  }

  /** The runner's step: a few chunks of each preparing execution; one whose audience is copied becomes scheduled (execution.progress). */
  async prepare(): Promise<number> {
    const due = await query<{ id: string }>(this.em.fork(), `select id from executions where status = 'preparing' order by created_at, id limit ?`, [
      EXECUTIONS_PER_TICK,
    ]);
    let chunks = 0;
    for (const { id } of due) {
      for (let taken = 0; taken < this.chunksPerTick; taken++) {
        chunks++;
        if (!(await this.next(id))) break;
      }
    }
    return chunks;
  }

  /** One chunk of one preparing execution in one transaction; false once it is no longer preparing (done, cancelled, or another runner's now). */
  private async next(executionId: string): Promise<boolean> {
    return this.events.transaction(this.em.fork(), async (tx, record) => {
      const [execution] = await query<{ organization_id: string; program_id: string; audience_id: string | null; snapshot_after: string | null }>(
        tx,
        `select organization_id, program_id, audience_id, snapshot_after from executions where id = ? and status = 'preparing' for update skip locked`,
        [executionId],
      );
      if (!execution) return false;
      const target = { id: executionId, organizationId: execution.organization_id, audienceId: execution.audience_id, snapshotAfter: execution.snapshot_after };
      const { added, last, done } = await this.take(tx, target);
      await query(
        tx,
        `update executions set total_contacts = total_contacts + ?, contacts_pending = contacts_pending + ?, snapshot_after = ?,
           status = case when ? then 'scheduled' else status end, updated_at = now()
          where id = ?`,
        [added, added, last, done, executionId],
      );
      if (done) {
        record({
          executionId,
          programId: execution.program_id,
          organizationId: execution.organization_id,
          from: ExecutionStatus.preparing,
          to: ExecutionStatus.scheduled,
          reason: 'snapshot',
        });
      }
      return !done;
    });
  }
}
