import type { LiveTrigger } from '../../src/modules/programs/program.types.js';
import { CreateBusinessEntityDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { recordStatements } from '../helpers/users.js';
import { createAudience, createContact, executionsOf, insertProgram, syncProgram, triggerRows } from './fixtures.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

/** The day before an appointment's startsAt, 09:00 in the contact's zone. */
const APPOINTMENT: LiveTrigger = { attribute: 'startsAt', source: 'entity', entityType: 'appointment', offsetDays: -1, timeOfDay: '09:00' };

/** A business entity through the REST door (so the entities module's hook runs). */
async function createEntity(contactId: string, type: string, attributes: Record<string, unknown>): Promise<string> {
  const res = await acme.rest.post('/api/business-entities', { contactId, type, name: `${type} ${Object.values(attributes).join()}`, attributes });
  if (res.status !== 201) throw new Error(`entity: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** [contact, value, status] of every trigger, in a stable order. */
const statuses = async (programId: string) =>
  (await triggerRows(app, programId)).map((row) => [row.contact_id, row.attribute_value, row.status]).sort((a, b) => a.join().localeCompare(b.join()));

describe('live programs with an entity source', () => {
  it("creates one trigger per distinct date of the contact's entities of the type, in the contact's zone, in one query", async () => {
    const ny = await createContact(acme, { name: 'Nora', timeZone: 'America/New_York', attributes: { startsAt: '2030-01-01' } });
    const paris = await createContact(acme, { name: 'Pierre', timeZone: 'Europe/Paris' });
    const bare = await createContact(acme, { name: 'No entity', attributes: { startsAt: '2030-02-02' } });
    const audienceId = await createAudience(acme, [ny, paris, bare]);
    await createEntity(ny, 'appointment', { startsAt: '2030-03-10' });
    await createEntity(ny, 'appointment', { startsAt: '2030-04-20T15:00:00-04:00' });
    await createEntity(ny, 'appointment', { startsAt: '2030-03-10' }); // the same date again: one trigger
    await createEntity(ny, 'appointment', { endsAt: '2030-05-05' }); // no startsAt
    await createEntity(ny, 'invoice', { startsAt: '2030-06-06' }); // another type
    // Through the GraphQL door too: 22:30Z on July 1 is July 2 in Paris.
    await acme.graphql.ok(CreateBusinessEntityDocument, {
      input: { contactId: paris, type: 'appointment', name: 'Check-up', attributes: { startsAt: '2030-07-01T22:30:00Z' } },
    });
    const programId = await insertProgram(app, acme, { audienceId, liveTrigger: APPOINTMENT });

    let result: Awaited<ReturnType<typeof syncProgram>> | undefined;
    const statements = await recordStatements(app, async () => {
      result = await syncProgram(app, programId);
    });
    expect(result).toMatchObject({ programId, created: 3, cancelled: 0, pending: 3 });
    expect(statements.filter((sql) => /business_entities/.test(sql))).toHaveLength(1);

    const rows = await triggerRows(app, programId);
    const at = (contactId: string, value: string) => rows.find((row) => row.contact_id === contactId && row.attribute_value === value)?.trigger_at.toISOString();
    expect(rows).toHaveLength(3);
    // New York is still on EST on March 9 2030 (DST starts March 10); on April 19 it is on EDT.
    expect(at(ny, '2030-03-10')).toBe('2030-03-09T14:00:00.000Z');
    expect(at(ny, '2030-04-20T15:00:00-04:00')).toBe('2030-04-19T13:00:00.000Z');
    expect(at(paris, '2030-07-01T22:30:00Z')).toBe('2030-07-01T07:00:00.000Z');
    // The contact's own attribute of that name is not the source; nor is another type's date.
    expect(rows.some((row) => row.contact_id === bare || ['2030-01-01', '2030-06-06'].includes(row.attribute_value))).toBe(false);

    // The operator's resync answers on the REST door instead of refusing entity sources.
    const res = await acme.rest.post(`/api/programs/${programId}/triggers/sync`);
    expect([res.status, res.body.created, res.body.cancelled, res.body.pending]).toEqual([200, 0, 0, 3]);
  });

  it('follows entity changes on their own: new, redated, retyped, moved and deleted entities', async () => {
    const [alice, bob] = [await createContact(acme, { name: 'Alice' }), await createContact(acme, { name: 'Bob', timeZone: 'Asia/Tokyo' })];
    const audienceId = await createAudience(acme, [alice, bob]);
    const redated = await createEntity(alice, 'appointment', { startsAt: '2031-01-10' });
    const retyped = await createEntity(alice, 'appointment', { startsAt: '2031-02-10' });
    const deleted = await createEntity(alice, 'appointment', { startsAt: '2031-03-10' });
    const moved = await createEntity(alice, 'appointment', { startsAt: '2031-04-10' });
    const programId = await insertProgram(app, acme, { audienceId, liveTrigger: APPOINTMENT });
    await syncProgram(app, programId);
    expect((await triggerRows(app, programId)).map((row) => row.status)).toEqual(Array(4).fill('pending'));

    // Each change goes through the entities module's doors; its hook resyncs without being asked.
    expect((await acme.rest.put(`/api/business-entities/${redated}`, { attributes: { startsAt: '2031-01-20' } })).status).toBe(200);
    expect((await acme.rest.put(`/api/business-entities/${retyped}`, { type: 'invoice' })).status).toBe(200);
    expect((await acme.rest.delete(`/api/business-entities/${deleted}`)).status).toBe(204);
    expect((await acme.rest.put(`/api/business-entities/${moved}`, { contactId: bob })).status).toBe(200);
    await createEntity(bob, 'appointment', { startsAt: '2031-05-10' });
    await createEntity(bob, 'invoice', { startsAt: '2031-06-10' });

    expect(await statuses(programId)).toEqual(
      [
        [alice, '2031-01-10', 'cancelled'],
        [alice, '2031-01-20', 'pending'],
        [alice, '2031-02-10', 'cancelled'],
        [alice, '2031-03-10', 'cancelled'],
        [alice, '2031-04-10', 'cancelled'],
        [bob, '2031-04-10', 'pending'],
        [bob, '2031-05-10', 'pending'],
      ].sort((a, b) => a.join().localeCompare(b.join())),
    );
    // The moved entity's trigger is at Bob's 09:00 (Tokyo) the day before: 00:00Z.
    const bobs = (await triggerRows(app, programId)).find((row) => row.contact_id === bob && row.attribute_value === '2031-04-10')!;
    expect([bobs.trigger_at.toISOString(), bobs.contact_name]).toEqual(['2031-04-09T00:00:00.000Z', 'Bob']);

    // A cancelled trigger is revived when the date comes back (still ahead).
    await acme.rest.put(`/api/business-entities/${redated}`, { attributes: { startsAt: '2031-01-10' } });
    expect(await statuses(programId)).toContainEqual([alice, '2031-01-10', 'pending']);
    expect(await statuses(programId)).toContainEqual([alice, '2031-01-20', 'cancelled']);
  });

  it("fires like a contact attribute's trigger, and cancels at fire time when the contact is gone", async () => {
    const [first, second, gone] = [await createContact(acme, { timeZone: 'Europe/Paris' }), await createContact(acme), await createContact(acme)];
    const audienceId = await createAudience(acme, [first, second, gone]);
    await createEntity(first, 'appointment', { startsAt: '2040-01-11' });
    await createEntity(second, 'appointment', { startsAt: '2040-01-11' });
    await createEntity(gone, 'appointment', { startsAt: '2040-01-11' });
    const programId = await insertProgram(app, acme, { audienceId, liveTrigger: APPOINTMENT });
    await syncProgram(app, programId);
    // Deleted behind the hooks' back: the trigger stays pending until fire time.
    await app.sql('delete from contacts where id = ?', [gone]);

    const fireDue = (now: string) => app.gateway.services.triggers.fireDue(new Date(now));
    // The earlier tests' triggers (2030, 2031) fire first, so the counts below are this program's.
    while ((await fireDue('2039-12-31T00:00:00Z')).triggered > 0);
    // 09:00 in Paris on January 10 is 08:00Z; 09:00 UTC comes an hour later.
    expect(await fireDue('2040-01-10T07:59:59Z')).toEqual({ triggered: 0, cancelled: 0 });
    expect(await fireDue('2040-01-10T08:00:00Z')).toEqual({ triggered: 1, cancelled: 0 });
    expect(await fireDue('2040-01-10T09:00:00Z')).toEqual({ triggered: 1, cancelled: 1 });
    expect(await statuses(programId)).toEqual(
      [
        [first, '2040-01-11', 'triggered'],
        [second, '2040-01-11', 'triggered'],
        [gone, '2040-01-11', 'cancelled'],
      ].sort((a, b) => a.join().localeCompare(b.join())),
    );
    const [execution, ...others] = await executionsOf(app, programId);
    expect(others).toEqual([]);
    expect(execution).toMatchObject({ status: 'running', total_contacts: 2, contacts_pending: 2 });
    const queued = await app.sql<{ contact_id: string }>('select contact_id from execution_contacts where execution_id = ?', [execution!.id]);
    expect(queued.map((row) => row.contact_id).sort()).toEqual([first, second].sort());
  });
});
