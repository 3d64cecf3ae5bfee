import type { EntityManager } from '@mikro-orm/postgresql';
import { Audience } from '../../src/modules/contacts/audience.entity.js';
import { Organization } from '../../src/modules/organizations/organization.entity.js';
import { Program } from '../../src/modules/programs/program.entity.js';
import { ProgramKind, ProgramStatus } from '../../src/modules/programs/program.enums.js';
import type { LiveTrigger } from '../../src/modules/programs/program.types.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';

let phone = 100;

/** A fresh EntityManager on the test database, outside any request. */
export function entityManager(app: TestApp): EntityManager {
  return app.db.database.em.fork();
}

/** A contact through the REST door (so the contacts module's hook runs), with a unique phone. */
export async function createContact(
  org: TestOrganization,
  fields: { name?: string; timeZone?: string | null; attributes?: Record<string, unknown>; optedOut?: boolean } = {},
): Promise<string> {
  const res = await org.rest.post('/api/contacts', { phone: `+1415555${String(++phone).padStart(4, '0')}`, ...fields });
  if (res.status !== 201) throw new Error(`contact: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** An audience with these members, through the REST door. */
export async function createAudience(org: TestOrganization, contactIds: string[]): Promise<string> {
  const audience = await org.rest.post('/api/audience', { name: `Audience ${++phone}` });
  if (contactIds.length > 0) {
    const res = await org.rest.post(`/api/audience/${audience.body.id}/members`, { contactIds });
    if (res.status !== 200) throw new Error(`members: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return audience.body.id;
}

export const BIRTHDAY: LiveTrigger = { attribute: 'birthday', source: 'contact', entityType: null, offsetDays: 0, timeOfDay: '09:00' };

/** A program written straight to the database (the programs module owns its doors): live and active unless told. */
export async function insertProgram(
  app: TestApp,
  org: TestOrganization,
  fields: { audienceId: string | null; liveTrigger?: LiveTrigger | null; kind?: ProgramKind; status?: ProgramStatus; name?: string },
): Promise<string> {
  const em = entityManager(app);
  const program = em.create(Program, {
    organization: em.getReference(Organization, org.organizationId),
    name: fields.name ?? 'Birthday calls',
    kind: fields.kind ?? ProgramKind.live,
    status: fields.status ?? ProgramStatus.active,
    audience: fields.audienceId ? em.getReference(Audience, fields.audienceId) : null,
    liveTrigger: fields.liveTrigger === undefined ? BIRTHDAY : fields.liveTrigger,
    autoPauseRules: [{ nodeId: 'end', threshold: 3, resetOnResume: true }],
  });
  await em.flush();
  return program.id;
}

/** What the activation of a program would call. */
export function syncProgram(app: TestApp, programId: string, now?: Date) {
  return app.gateway.services.triggers.syncProgram(entityManager(app), programId, now);
}

export interface TriggerRow {
  id: string;
  contact_id: string;
  attribute_value: string;
  status: string;
  trigger_at: Date;
  triggered_at: Date | null;
  contact_phone: string;
  contact_name: string | null;
}

/** A program's triggers, straight from the table, by contact then value. */
export async function triggerRows(app: TestApp, programId: string): Promise<TriggerRow[]> {
  const rows = await app.sql<TriggerRow>(
    'select id, contact_id, attribute_value, status, trigger_at, triggered_at, contact_phone, contact_name from contact_triggers where program_id = ? order by created_at, attribute_value',
    [programId],
  );
  return rows.map((row) => ({ ...row, trigger_at: new Date(row.trigger_at), triggered_at: row.triggered_at && new Date(row.triggered_at) }));
}

/** The counters must add up, and count the queue rows, at every commit. */
export async function executionsOf(app: TestApp, programId: string) {
  const rows = await app.sql<Record<string, number | string | Date>>(
    `select e.id, e.status, e.total_contacts, e.contacts_pending, e.contacts_completed, e.contacts_failed, e.contacts_in_progress,
            e.actual_start_at, e.auto_pause_rules, (select count(*)::int from execution_contacts x where x.execution_id = e.id) as rows
       from executions e where e.program_id = ? order by e.created_at`,
    [programId],
  );
  for (const row of rows) {
    expect(Number(row.contacts_pending) + Number(row.contacts_completed) + Number(row.contacts_failed) + Number(row.contacts_in_progress)).toBe(
      Number(row.total_contacts),
    );
    expect(Number(row.rows)).toBe(Number(row.total_contacts));
  }
  return rows;
}
