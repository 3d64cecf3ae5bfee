import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Contact } from '../../contacts/contact.entity.js';
import { ContactTrigger } from '../contact-trigger.entity.js';
import { ExecutionContact } from '../execution-contact.entity.js';
import type { ExecutionEvents, RecordTransition } from '../execution-events.js';
import { FINAL_STATES } from '../execution-state.js';
import { Execution } from '../execution.entity.js';
import { Program } from '../program.entity.js';
import { ExecutionContactStatus, ExecutionStatus, TriggerStatus } from '../program.enums.js';
import { isLiveActive } from './trigger-sync.js';
import { EventWriter } from '../../events/event-writer.js';
import { TRIGGER_FIELDS } from './trigger.types.js';

/** trigger.fired: the trigger as REST shows it (the interface's fields), with its program and the execution it queued the contact into. */
function triggerPayload(trigger: ContactTrigger, executionId: string): Record<string, unknown> {
  const fields = Object.fromEntries(
    TRIGGER_FIELDS.map((field) => {
      const value = (trigger as unknown as Record<string, unknown>)[field];
      return [field, value instanceof Date ? value.toISOString() : (value ?? null)];
    }),
  );
  return { ...fields, programId: trigger.program.id, executionId };
}

/** Triggers claimed per call; the runner calls again on its next tick for the rest. */
export const FIRE_BATCH = 500;

export interface FireResult {
  triggered: number;
  cancelled: number;
}

/**
 * The program's open live execution (any state but a final one), locked; or a new running one.
 * An advisory lock per program serializes find-or-create across replicas without locking the
 * program row, which program updates lock in the other order (program, then its triggers).
 */
async function liveExecution(em: EntityManager, program: Program, now: Date, record: RecordTransition): Promise<Execution> {
  await em.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`live-execution:${program.id}`]);
  const open = await em.findOne(
    Execution,
    { program: program.id, status: { $nin: [...FINAL_STATES] } },
    { orderBy: { createdAt: 'desc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
  );
  if (open) return open;
  const opened = em.create(Execution, {
    organization: program.organization,
    program,
    audienceId: program.audience?.id ?? null,
    flowId: program.flow?.id ?? null,
    status: ExecutionStatus.running,
    actualStartAt: now,
    autoPauseRules: structuredClone(program.autoPauseRules),
  });
  record({
    executionId: opened.id,
    programId: program.id,
    organizationId: program.organization.id,
    from: null,
    to: ExecutionStatus.running,
    reason: 'trigger',
  });
  return opened;
}

/** Puts contacts in the execution's queue; the counters move with the rows (the invariant holds). */
async function enqueue(em: EntityManager, execution: Execution, contacts: Contact[]): Promise<void> {
  const queued = await em.find(ExecutionContact, { execution: execution.id, contact: { $in: contacts.map((contact) => contact.id) } });
  const byContact = new Map(queued.map((row) => [row.contact?.id, row]));
  for (const contact of contacts) {
    const row = byContact.get(contact.id);
    if (!row) {
      em.create(ExecutionContact, { organization: execution.organization, execution, contact, phone: contact.phone, timeZone: contact.timeZone });
      execution.totalContacts += 1;
      execution.contactsPending += 1;
    } else if (row.status === ExecutionContactStatus.completed || row.status === ExecutionContactStatus.failed) {
      // Called before for another date: the same row is queued again, moved from its final count.
      if (row.status === ExecutionContactStatus.completed) execution.contactsCompleted -= 1;
      else execution.contactsFailed -= 1;
      // Suppressed last time: it leaves that count too (the list is checked again when it is claimed).
      if (row.lastOutcome === 'do_not_call') execution.contactsDoNotCall -= 1;
      // And its outcome's count (what `outcomes` shows is the contacts finished now).
      if (row.lastOutcome && (execution.outcomeCounts[row.lastOutcome] ?? 0) > 0) {
        execution.outcomeCounts = { ...execution.outcomeCounts, [row.lastOutcome]: execution.outcomeCounts[row.lastOutcome]! - 1 };
      }
      execution.contactsPending += 1;
      Object.assign(row, {
        status: ExecutionContactStatus.pending,
        attempts: 0,
        nextAttemptAt: null,
        claimedBy: null,
        leaseUntil: null,
        lastOutcome: null,
        requeue: false,
        // reachedNodeIds stay: auto-pause counts a node once per contact of the execution.
        completedAt: null,
        phone: contact.phone,
        timeZone: contact.timeZone,
      });
    } else if (row.status === ExecutionContactStatus.in_progress || row.attempts > 0 || row.claimedBy) {
      // Being called (or retried) for an earlier date: once that call is recorded the row is queued again for this one.
      row.requeue = true;
    }
    // A pending row never called yet: its coming call serves this date too.
  }
}

/**
 * Claims due pending triggers (FOR UPDATE SKIP LOCKED, so concurrent callers never share one),
 * marks them triggered and queues each contact into its program's live execution, all in one
 * transaction. A contact that is gone or opted out, or a program no longer live and active,
 * cancels the trigger instead.
 */
export async function fireDueTriggers(em: EntityManager, now: Date, events: ExecutionEvents): Promise<FireResult> {
  return events.transaction(em, async (tx, record) => {
    const due = await tx.find(
      ContactTrigger,
      { status: TriggerStatus.pending, triggerAt: { $lte: now } },
      { orderBy: { triggerAt: 'asc', id: 'asc' }, limit: FIRE_BATCH, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
    );
    if (due.length === 0) return { triggered: 0, cancelled: 0 };
    const contactIds = [...new Set(due.map((trigger) => trigger.contactId))];
    const contacts = new Map((await tx.find(Contact, { id: { $in: contactIds } })).map((contact) => [contact.id, contact]));
    const programIds = [...new Set(due.map((trigger) => trigger.program.id))].sort();
    const programs = new Map((await tx.find(Program, { id: { $in: programIds } })).map((program) => [program.id, program]));

    const byProgram = new Map<string, Map<string, Contact>>();
    const fired = new Map<string, ContactTrigger[]>();
    let cancelled = 0;
    for (const trigger of due) {
      const contact = contacts.get(trigger.contactId);
      const program = programs.get(trigger.program.id);
      if (!contact || contact.optedOut || !program || !isLiveActive(program) || contact.organization.id !== trigger.organization.id) {
        trigger.status = TriggerStatus.cancelled;
        cancelled += 1;
        continue;
      }
      trigger.status = TriggerStatus.triggered;
      trigger.triggeredAt = now;
      if (!byProgram.has(program.id)) byProgram.set(program.id, new Map());
      byProgram.get(program.id)!.set(contact.id, contact);
      fired.set(program.id, [...(fired.get(program.id) ?? []), trigger]);
    }
    // Programs in id order, so two callers take their advisory locks in the same order.
    for (const programId of programIds) {
      const group = byProgram.get(programId);
      if (!group) continue;
      const execution = await liveExecution(tx, programs.get(programId)!, now, record);
      await enqueue(tx, execution, [...group.values()]);
      for (const trigger of fired.get(programId) ?? []) {
        EventWriter.stage(tx, { organizationId: trigger.organization.id, type: 'trigger.fired', payload: triggerPayload(trigger, execution.id) });
      }
    }
    return { triggered: due.length - cancelled, cancelled };
  });
}
