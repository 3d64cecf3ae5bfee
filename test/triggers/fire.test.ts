import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAudience, createContact, executionsOf, insertProgram, syncProgram, triggerRows } from './fixtures.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

const fireDue = (now: string) => app.gateway.services.triggers.fireDue(new Date(now));

/** A live program over contacts with these birthdays (09:00 UTC on the day), synced. */
async function liveProgram(birthdays: string[], timeZone: string | null = null) {
  const contactIds: string[] = [];
  for (const birthday of birthdays) contactIds.push(await createContact(acme, { timeZone, attributes: { birthday } }));
  const audienceId = await createAudience(acme, contactIds);
  const programId = await insertProgram(app, acme, { audienceId });
  await syncProgram(app, programId);
  return { programId, contactIds, audienceId };
}

describe('fireDue', () => {
  it('fires nothing before triggerAt, then triggers and queues each contact into one live execution', async () => {
    const { programId, contactIds } = await liveProgram(['2040-01-10', '2040-01-10', '2040-01-20'], 'Europe/Paris');
    // 09:00 in Paris on January 10 is 08:00Z.
    expect(await fireDue('2040-01-10T07:59:59.999Z')).toEqual({ triggered: 0, cancelled: 0 });
    expect(await executionsOf(app, programId)).toEqual([]);

    const now = '2040-01-10T08:00:00.000Z';
    expect(await fireDue(now)).toEqual({ triggered: 2, cancelled: 0 });
    const rows = await triggerRows(app, programId);
    const fired = rows.filter((row) => row.status === 'triggered');
    expect(fired.map((row) => row.contact_id).sort()).toEqual([contactIds[0], contactIds[1]].sort());
    expect(fired.every((row) => row.triggered_at?.toISOString() === now)).toBe(true);
    expect(rows.find((row) => row.contact_id === contactIds[2])).toMatchObject({ status: 'pending', triggered_at: null });

    const [execution, ...others] = await executionsOf(app, programId);
    expect(others).toEqual([]);
    expect(execution).toMatchObject({ status: 'running', total_contacts: 2, contacts_pending: 2, contacts_completed: 0 });
    expect(new Date(execution!.actual_start_at as Date).toISOString()).toBe(now);
    expect(execution!.auto_pause_rules).toEqual([{ nodeId: 'end', threshold: 3, resetOnResume: true }]);
    const queue = await app.sql<{ contact_id: string; phone: string; time_zone: string; status: string }>(
      'select contact_id, phone, time_zone, status from execution_contacts where execution_id = ? order by phone',
      [execution!.id],
    );
    expect(queue.map((row) => row.contact_id).sort()).toEqual([contactIds[0], contactIds[1]].sort());
    expect(queue.every((row) => row.time_zone === 'Europe/Paris' && row.status === 'pending' && row.phone.startsWith('+1415555'))).toBe(true);

    // Fired triggers do not fire again; a later one joins the same execution.
    expect(await fireDue(now)).toEqual({ triggered: 0, cancelled: 0 });
    expect(await fireDue('2040-01-21T00:00:00Z')).toEqual({ triggered: 1, cancelled: 0 });
    const after = await executionsOf(app, programId);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ id: execution!.id, total_contacts: 3, contacts_pending: 3 });
  });

  it('cancels instead when the contact opted out or is gone at fire time, or the program is no longer active', async () => {
    const { programId, contactIds } = await liveProgram(['2041-02-01', '2041-02-01', '2041-02-01']);
    // Behind the services' back, so the hooks do not cancel first.
    await app.sql('update contacts set opted_out = true where id = ?', [contactIds[0]]);
    await app.sql('delete from contacts where id = ?', [contactIds[1]]);
    expect(await fireDue('2041-02-02T00:00:00Z')).toEqual({ triggered: 1, cancelled: 2 });
    const rows = await triggerRows(app, programId);
    expect(Object.fromEntries(rows.map((row) => [row.contact_id, row.status]))).toEqual({
      [contactIds[0]!]: 'cancelled',
      [contactIds[1]!]: 'cancelled',
      [contactIds[2]!]: 'triggered',
    });
    expect((await executionsOf(app, programId))[0]).toMatchObject({ total_contacts: 1 });

    const archived = await liveProgram(['2041-03-01']);
    await app.sql(`update programs set status = 'archived' where id = ?`, [archived.programId]);
    expect(await fireDue('2041-03-02T00:00:00Z')).toEqual({ triggered: 0, cancelled: 1 });
    expect(await executionsOf(app, archived.programId)).toEqual([]);
  });

  it('queues a contact called before again, moving it back from its final count, and opens a new execution after a stop', async () => {
    const contactId = await createContact(acme, { attributes: { birthday: '2042-05-01' } });
    const audienceId = await createAudience(acme, [contactId]);
    const programId = await insertProgram(app, acme, { audienceId });
    await syncProgram(app, programId);
    await fireDue('2042-05-02T00:00:00Z');
    const [execution] = await executionsOf(app, programId);
    // As the runner would record a finished call.
    await app.sql(`update execution_contacts set status = 'completed', attempts = 1, completed_at = now() where execution_id = ?`, [execution!.id]);
    await app.sql('update executions set contacts_pending = 0, contacts_completed = 1 where id = ?', [execution!.id]);

    await acme.rest.put(`/api/contacts/${contactId}`, { attributes: { birthday: '2042-06-01' } });
    expect(await fireDue('2042-06-02T00:00:00Z')).toEqual({ triggered: 1, cancelled: 0 });
    expect(await executionsOf(app, programId)).toMatchObject([{ id: execution!.id, total_contacts: 1, contacts_pending: 1, contacts_completed: 0 }]);
    const [row] = await app.sql('select status, attempts, completed_at from execution_contacts where execution_id = ?', [execution!.id]);
    expect(row).toMatchObject({ status: 'pending', attempts: 0, completed_at: null });

    await app.sql(`update executions set status = 'stopped' where id = ?`, [execution!.id]);
    await acme.rest.put(`/api/contacts/${contactId}`, { attributes: { birthday: '2042-07-01' } });
    await fireDue('2042-07-02T00:00:00Z');
    const executions = await executionsOf(app, programId);
    expect(executions.map((each) => [each.status, each.total_contacts])).toEqual([
      ['stopped', 1],
      ['running', 1],
    ]);
  });

  it('triggers each due trigger exactly once when two callers fire at the same time', async () => {
    const programs = await Promise.all([0, 1, 2].map(() => liveProgram(Array(8).fill('2043-01-01'))));
    const now = '2043-01-02T00:00:00Z';
    const results = await Promise.all([fireDue(now), fireDue(now), fireDue(now)]);
    expect(results.reduce((sum, result) => sum + result.triggered, 0)).toBe(24);
    expect(results.every((result) => result.cancelled === 0)).toBe(true);
    for (const { programId } of programs) {
      expect((await triggerRows(app, programId)).map((row) => row.status)).toEqual(Array(8).fill('triggered'));
      const executions = await executionsOf(app, programId);
      expect(executions.map((each) => [each.status, each.total_contacts, each.contacts_pending])).toEqual([['running', 8, 8]]);
    }
  });
});
