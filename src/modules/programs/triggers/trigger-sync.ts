import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { audienceSource, memberCondition } from '../../contacts/segments.js';
import { ContactTrigger } from '../contact-trigger.entity.js';
import type { Program } from '../program.entity.js';
import { ProgramKind, ProgramStatus, TriggerStatus } from '../program.enums.js';
import { computeTriggerAt } from './trigger-schedule.js';

/** A contact of the program's audience that may be called: a member, not opted out. */
interface Candidate {
  contact_id: string;
  phone: string;
  name: string | null;
  time_zone: string | null;
  value: string | null;
}

export interface SyncCounts {
  created: number;
  cancelled: number;
}

/** Whether the program calls anyone on dates now: live, active, with a trigger and an audience. */
export function isLiveActive(program: Program): boolean {
  return program.kind === ProgramKind.live && program.status === ProgramStatus.active && !!program.liveTrigger && !!program.audience;
}

/** The attribute value column is 64 characters; a longer value is not a date anyway. */
const MAX_VALUE = 64;
/** Rows per INSERT: 12 columns each stays well under PostgreSQL's 65535 bind parameters. */
const INSERT_CHUNK = 2000;

/**
 * The date values of the audience's callable contacts, one row per value: the contact's attribute,
 * or (source "entity") that attribute of each of its business entities of the trigger's type, all
 * in one statement whatever the number of contacts. A contact without a value yields no row.
 */
async function candidatesOf(em: EntityManager, program: Program, contactId?: string): Promise<Candidate[]> {
  if (!isLiveActive(program)) return [];
  const trigger = program.liveTrigger!;
  const entity = trigger.source === 'entity';
  // Its members, or (a segment) whoever its filter matches.
  const audience = await audienceSource(em, program.organization.id, program.audience!.id);
  if (!audience) return [];
  const membership = memberCondition(audience);
  const params: unknown[] = entity ? [trigger.attribute, trigger.entityType ?? ''] : [trigger.attribute];
  params.push(program.organization.id, ...membership.params);
  if (contactId) params.push(contactId);
  const source = entity
    ? `e.attributes ->> ? as value
       from contacts c join business_entities e on e.contact_id = c.id and e.organization_id = c.organization_id and e.type = ?`
    : `c.attributes ->> ? as value
       from contacts c`;
  return em.execute<Candidate[]>(
    `select c.id as contact_id, c.phone, c.name, c.time_zone, ${source}
      where c.organization_id = ? and ${membership.sql('c')} and c.opted_out = false ${contactId ? 'and c.id = ?' : ''}`,
    params,
  );
}

/**
 * Brings a program's triggers in line with its audience (or with one contact of it): one trigger
 * per (contact, date value); a pending trigger whose contact left, opted out, was removed or whose
 * value changed (for entity sources: its entity was deleted, moved, retyped or redated) is cancelled; a new value gets a pending trigger unless its time is already past.
 * Cancellations and time changes apply only while a trigger is still pending, so a trigger that
 * fireDue claimed concurrently stays triggered. A triggered trigger is never revived; a cancelled one
 * whose (contact, value) is wanted again with a time still ahead goes back to pending (counted as created).
 */
export async function syncTriggers(em: EntityManager, program: Program, now: Date, contactId?: string): Promise<SyncCounts> {
  const trigger = program.liveTrigger;
  const desired = new Map<string, { candidate: Candidate; triggerAt: Date }>();
  for (const candidate of await candidatesOf(em, program, contactId)) {
    if (!candidate.value || candidate.value.length > MAX_VALUE) continue;
    const triggerAt = computeTriggerAt(candidate.value, trigger!.offsetDays, trigger!.timeOfDay, candidate.time_zone);
    if (triggerAt) desired.set(`${candidate.contact_id}|${candidate.value}`, { candidate, triggerAt });
  }
  const existing = await em.find(ContactTrigger, { program: program.id, ...(contactId ? { contactId } : {}) });
  const toCancel: string[] = [];
  let revived = 0;
  for (const row of existing) {
    const key = `${row.contactId}|${row.attributeValue}`;
    const wanted = desired.get(key);
    desired.delete(key);
    if (row.status === TriggerStatus.cancelled && wanted && wanted.triggerAt > now) {
      // The date came back (changed back, opted back in, rejoined): the contact is called for it after all.
      revived += await em.nativeUpdate(
        ContactTrigger,
        { id: row.id, status: TriggerStatus.cancelled },
        {
          status: TriggerStatus.pending,
          triggerAt: wanted.triggerAt,
          contactPhone: wanted.candidate.phone,
          contactName: wanted.candidate.name,
          triggeredAt: null,
          updatedAt: now,
        },
      );
      continue;
    }
    if (row.status !== TriggerStatus.pending) continue;
    if (!wanted || (wanted.triggerAt.getTime() !== row.triggerAt.getTime() && wanted.triggerAt <= now)) {
      toCancel.push(row.id);
    } else if (
      wanted.triggerAt.getTime() !== row.triggerAt.getTime() ||
      wanted.candidate.phone !== row.contactPhone ||
      wanted.candidate.name !== row.contactName
    ) {
      // The zone, the program's time or the contact's snapshot moved: the pending trigger follows.
      await em.nativeUpdate(
        ContactTrigger,
        { id: row.id, status: TriggerStatus.pending },
        { triggerAt: wanted.triggerAt, contactPhone: wanted.candidate.phone, contactName: wanted.candidate.name, updatedAt: now },
      );
    }
  }
  const cancelled = toCancel.length
    ? await em.nativeUpdate(ContactTrigger, { id: { $in: toCancel }, status: TriggerStatus.pending }, { status: TriggerStatus.cancelled, updatedAt: now })
    : 0;
  const rows = [...desired.values()]
    .filter(({ triggerAt }) => triggerAt > now)
    .map(({ candidate, triggerAt }) => ({
      id: randomUUID(),
      createdAt: now,
      updatedAt: now,
      organization: program.organization.id,
      program: program.id,
      contactId: candidate.contact_id,
      contactPhone: candidate.phone,
      contactName: candidate.name,
      triggerAt,
      attributeValue: candidate.value!,
      status: TriggerStatus.pending,
    }));
  let created = revived;
  for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
    // A concurrent sync may have inserted the same (program, contact, value): that one stands.
    const chunk = rows.slice(start, start + INSERT_CHUNK);
    const result = await em.createQueryBuilder(ContactTrigger).insert(chunk).onConflict(['program', 'contactId', 'attributeValue']).ignore().execute('run');
    created += result.affectedRows;
  }
  return { created, cancelled };
}
