import { RequestContext } from '@mikro-orm/core';
import { createLoaders } from '../../src/doors.js';
import { ProgramKind, ProgramStatus } from '../../src/modules/programs/program.enums.js';
import { CreateBusinessEntityDocument, SyncProgramTriggersDocument, TriggersDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAudience, createContact, executionsOf, insertProgram, syncProgram, triggerRows } from './fixtures.js';
import type { LiveTrigger } from '../../src/modules/programs/program.types.js';
import { recordStatements } from '../helpers/users.js';
import type { CallRequest, CallResult, Dialer } from '../../src/modules/programs/runner/dialer.js';
import { testRunner } from '../runner/fixtures.js';

// Program triggers: the listing endpoint, entity sources, firing, requeueing and sync, one describe each
// (they were one file each), each on an app and a database of its own. One file loads the app's
// modules once instead of five times (about 2 CPU s per file).

describe('endpoint', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;
  let programId: string;
  let campaignId: string;
  const contacts: Record<string, string> = {};

  const FIELDS = ['id', 'contactId', 'contactPhone', 'triggerAt', 'attributeValue', 'status', 'createdAt', 'contactName', 'triggeredAt'];

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    other = await app.organization('Other');
    contacts.late = await createContact(acme, { name: 'Late', attributes: { birthday: '2050-12-01' } });
    contacts.early = await createContact(acme, { name: 'Early', attributes: { birthday: '2050-01-15' } });
    contacts.middle = await createContact(acme, { attributes: { birthday: '2050-06-01' } });
    contacts.quitter = await createContact(acme, { name: 'Quitter', attributes: { birthday: '2050-03-01' } });
    const audienceId = await createAudience(acme, Object.values(contacts));
    programId = await insertProgram(app, acme, { audienceId });
    campaignId = await insertProgram(app, acme, { audienceId, kind: ProgramKind.campaign, liveTrigger: null });
    await syncProgram(app, programId);
    await acme.rest.put(`/api/contacts/${contacts.quitter}`, { optedOut: true });
    await app.gateway.services.triggers.fireDue(new Date('2050-01-16T00:00:00Z'));
  });
  afterAll(() => app.close());

  describe('GET /api/programs/{id}/triggers and triggers(programId, status)', () => {
    it('answers a plain array with exactly the interface fields, by triggerAt', async () => {
      const res = await acme.rest.get(`/api/programs/${programId}/triggers`);
      expect(res.status).toBe(200);
      expect(res.body.map((trigger: Record<string, unknown>) => Object.keys(trigger))).toEqual(Array(4).fill(FIELDS));
      expect(res.body.map((trigger: { contactName: string | null; status: string }) => [trigger.contactName, trigger.status])).toEqual([
        ['Early', 'triggered'],
        ['Quitter', 'cancelled'],
        [null, 'pending'],
        ['Late', 'pending'],
      ]);
      expect(res.body[0]).toMatchObject({
        contactId: contacts.early,
        attributeValue: '2050-01-15',
        triggerAt: '2050-01-15T09:00:00.000Z',
        triggeredAt: '2050-01-16T00:00:00.000Z',
      });
      expect(res.body[3].triggeredAt).toBeNull();
      expect(res.body[0].contactPhone).toMatch(/^\+1415555\d{4}$/);

      const { triggers } = await acme.graphql.ok(TriggersDocument, { programId });
      expect(triggers).toEqual(res.body);
    });

    it('filters by status on both doors', async () => {
      for (const [status, names] of [
        ['pending', [null, 'Late']],
        ['triggered', ['Early']],
        ['cancelled', ['Quitter']],
      ] as const) {
        const res = await acme.rest.get(`/api/programs/${programId}/triggers?status=${status}`);
        expect(res.body.map((trigger: { contactName: string | null }) => trigger.contactName)).toEqual(names);
        const { triggers } = await acme.graphql.ok(TriggersDocument, { programId, status });
        expect(triggers.map((trigger) => trigger.contactName)).toEqual(names);
      }
    });

    it('answers [] for a campaign program', async () => {
      expect((await acme.rest.get(`/api/programs/${campaignId}/triggers`)).body).toEqual([]);
      expect((await acme.graphql.ok(TriggersDocument, { programId: campaignId })).triggers).toEqual([]);
    });

    it('refuses an unknown status with 400 naming status on both doors', async () => {
      for (const query of ['status=fired', 'status=', 'color=red']) {
        const res = await acme.rest.get(`/api/programs/${programId}/triggers?${query}`);
        expect([query, res.status, res.body.code, res.body.errors.map((error: { field: string }) => error.field)]).toEqual([
          query,
          400,
          'BAD_USER_INPUT',
          [query.split('=')[0]],
        ]);
      }
      const result = await acme.graphql.run(TriggersDocument, { programId, status: 'fired' as never });
      expect(result.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(result.errors?.[0]?.extensions.errors?.map((error) => error.field)).toEqual(['status']);
    });

    it('answers 404 NOT_FOUND for another organization, an unknown or a malformed id, on both doors', async () => {
      for (const [client, id] of [
        [other, programId],
        [acme, '00000000-0000-4000-8000-000000000000'],
        [acme, 'not-a-uuid'],
      ] as const) {
        for (const res of [await client.rest.get(`/api/programs/${id}/triggers`), await client.rest.post(`/api/programs/${id}/triggers/sync`)]) {
          expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
        }
        for (const result of [
          await client.graphql.run(TriggersDocument, { programId: id }),
          await client.graphql.run(SyncProgramTriggersDocument, { programId: id }),
        ]) {
          expect(result.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
        }
      }
      expect(await app.sql('select count(*)::int as n from contact_triggers where program_id = ?', [programId])).toEqual([{ n: 4 }]);
    });
  });

  describe('resync: POST /api/programs/{id}/triggers/sync and syncProgramTriggers', () => {
    it('reports what changed, on both doors, with Program.triggers by status', async () => {
      const joiner = await createContact(acme, { name: 'Joiner', attributes: { birthday: '2050-02-01' } });
      // Written behind the services' back, so only the resync notices the new member.
      const [{ audience_id: audienceId }] = await app.sql<{ audience_id: string }>('select audience_id from programs where id = ?', [programId]);
      await app.sql(
        `insert into audience_members (id, created_at, updated_at, organization_id, audience_id, contact_id) values (gen_random_uuid(), now(), now(), ?, ?, ?)`,
        [acme.organizationId, audienceId, joiner],
      );
      const res = await acme.rest.post(`/api/programs/${programId}/triggers/sync`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ programId, created: 1, cancelled: 0, pending: 3, program: { id: programId, kind: 'live', name: 'Birthday calls' } });
      expect(res.body.program.liveTrigger).toMatchObject({ attribute: 'birthday', offsetDays: 0, timeOfDay: '09:00' });

      const { syncProgramTriggers } = await acme.graphql.ok(SyncProgramTriggersDocument, { programId });
      expect(syncProgramTriggers).toMatchObject({ programId, created: 0, cancelled: 0, pending: 3 });
      expect(syncProgramTriggers.program.all.map((trigger) => trigger.contactName)).toEqual(['Early', 'Joiner', 'Quitter', null, 'Late']);
      expect(syncProgramTriggers.program.pending).toHaveLength(3);
      expect(syncProgramTriggers.program.cancelled).toHaveLength(1);
    });

    it('loads Program.triggers for many programs in one batch', async () => {
      const second = await insertProgram(app, acme, { audienceId: await createAudience(acme, [contacts.late!]) });
      await syncProgram(app, second);
      const service = app.gateway.services.triggers;
      const original = service.triggersFor.bind(service);
      const calls: string[][] = [];
      service.triggersFor = (actor, ids, status) => {
        calls.push([...ids]);
        return original(actor, ids, status);
      };
      try {
        const actor = { userId: acme.userId, organizationId: acme.organizationId, roles: ['owner' as const], via: 'api-key' as const, apiKeyId: '' };
        const loaders = createLoaders(app.gateway.services, actor).triggers;
        const page = { page: 1, limit: 20 };
        // As in a request: the services' EntityManager resolves to the request's fork.
        const [first, again, other] = await RequestContext.create(app.db.database.orm.em, () =>
          Promise.all([loaders.forProgram(programId, page), loaders.forProgram(programId, page), loaders.forProgram(second, page)]),
        );
        expect(calls).toEqual([[programId, second]]);
        expect([first.data.length, again.data.length, other.data.map((trigger) => trigger.contactId)]).toEqual([5, 5, [contacts.late]]);
      } finally {
        service.triggersFor = original;
      }
    });
  });
});

describe('entity-source', () => {
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
      const at = (contactId: string, value: string) =>
        rows.find((row) => row.contact_id === contactId && row.attribute_value === value)?.trigger_at.toISOString();
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
});

describe('fire', () => {
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
});

describe('requeue', () => {
  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  /** A carrier whose calls hang until the test lets them end. */
  class HangingDialer implements Dialer {
    readonly calls: CallRequest[] = [];
    private readonly pending: ((result: CallResult) => void)[] = [];
    placeCall(call: CallRequest): Promise<CallResult> {
      this.calls.push(call);
      return new Promise((resolve) => this.pending.push(resolve));
    }
    finishAll(result: CallResult): void {
      for (const resolve of this.pending.splice(0)) resolve(result);
    }
  }

  const ANSWERED: CallResult = { outcome: 'answered', reachedNodeIds: [], durationSeconds: 30 };

  it('a trigger that fires while the contact is on a call for an earlier date calls it again once that call is recorded', async () => {
    await app.sql('update organizations set credit_balance = 10 where id = ?', [acme.organizationId]);
    const contactId = await createContact(acme, { attributes: { birthday: '2043-05-01' } });
    const programId = await insertProgram(app, acme, { audienceId: await createAudience(acme, [contactId]) });
    await syncProgram(app, programId);
    const fireDue = (now: string) => app.gateway.services.triggers.fireDue(new Date(now));
    const now = new Date('2043-05-01T09:00:00Z');
    const dialer = new HangingDialer();
    const runner = testRunner(app, { dialer, clock: () => now });

    expect(await fireDue('2043-05-01T09:00:00Z')).toEqual({ triggered: 1, cancelled: 0 });
    await runner.tick();
    expect(dialer.calls).toHaveLength(1);

    // The date moves on and its trigger fires mid-call.
    await acme.rest.put(`/api/contacts/${contactId}`, { attributes: { birthday: '2043-05-02' } });
    expect(await fireDue('2043-05-02T09:00:00Z')).toEqual({ triggered: 1, cancelled: 0 });
    expect(await executionsOf(app, programId)).toMatchObject([{ total_contacts: 1, contacts_in_progress: 1, contacts_pending: 0 }]);

    dialer.finishAll(ANSWERED);
    await runner.idle();
    expect(await executionsOf(app, programId)).toMatchObject([{ status: 'running', contacts_pending: 1, contacts_in_progress: 0, contacts_completed: 0 }]);
    const [row] = await app.sql('select status, attempts, requeue, last_outcome, completed_at from execution_contacts where contact_id = ?', [contactId]);
    expect(row).toMatchObject({ status: 'pending', attempts: 0, requeue: false, last_outcome: 'answered', completed_at: null });

    await runner.tick();
    expect(dialer.calls).toHaveLength(2);
    expect(dialer.calls[1]!.attempt).toBe(1);
    dialer.finishAll(ANSWERED);
    await runner.idle();
    expect(await executionsOf(app, programId)).toMatchObject([{ status: 'completed', contacts_pending: 0, contacts_completed: 1 }]);
    await runner.stop();
  });
});

describe('sync', () => {
  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  /** [contact, value, status] of every trigger, in a stable order (rows of one sync share created_at). */
  const statuses = async (programId: string) => sorted((await triggerRows(app, programId)).map((row) => [row.contact_id, row.attribute_value, row.status]));
  const sorted = (rows: string[][]) => rows.sort((a, b) => a.join().localeCompare(b.join()));

  describe('syncProgram', () => {
    it('creates one pending trigger per member with the date, at the time of day in the contact zone', async () => {
      const ny = await createContact(acme, { name: 'Nora', timeZone: 'America/New_York', attributes: { birthday: '2030-03-10' } });
      const paris = await createContact(acme, { name: 'Pierre', timeZone: 'Europe/Paris', attributes: { birthday: '2030-07-01T22:30:00Z' } });
      const utc = await createContact(acme, { attributes: { birthday: '2030-12-31' } });
      const none = await createContact(acme, { name: 'No date', attributes: { anniversary: '2030-01-01' } });
      const junk = await createContact(acme, { name: 'Junk', attributes: { birthday: 'soon' } });
      const past = await createContact(acme, { name: 'Past', attributes: { birthday: '2020-01-01' } });
      const optedOut = await createContact(acme, { name: 'Out', optedOut: true, attributes: { birthday: '2030-05-05' } });
      const outsider = await createContact(acme, { name: 'Not a member', attributes: { birthday: '2030-05-05' } });
      const audienceId = await createAudience(acme, [ny, paris, utc, none, junk, past, optedOut]);
      const programId = await insertProgram(app, acme, {
        audienceId,
        liveTrigger: { attribute: 'birthday', source: 'contact', offsetDays: -1, timeOfDay: '09:00' },
      });

      const result = await syncProgram(app, programId);
      expect(result).toMatchObject({ programId, created: 3, cancelled: 0, pending: 3 });
      const rows = await triggerRows(app, programId);
      const byContact = new Map(rows.map((row) => [row.contact_id, row]));
      expect(rows).toHaveLength(3);
      expect(rows.every((row) => row.status === 'pending' && row.triggered_at === null)).toBe(true);
      // The day before, 09:00 local: New York is still on EST on March 9 2030 (DST starts March 10).
      expect(byContact.get(ny)).toMatchObject({ attribute_value: '2030-03-10', contact_name: 'Nora' });
      expect(byContact.get(ny)!.trigger_at.toISOString()).toBe('2030-03-09T14:00:00.000Z');
      // 22:30Z on July 1 is July 2 in Paris: the day before is July 1, 09:00 CEST.
      expect(byContact.get(paris)!.trigger_at.toISOString()).toBe('2030-07-01T07:00:00.000Z');
      expect(byContact.get(utc)!.trigger_at.toISOString()).toBe('2030-12-30T09:00:00.000Z');
      expect(byContact.get(utc)!.contact_phone).toMatch(/^\+1415555/);
      for (const id of [none, junk, past, optedOut, outsider]) expect(byContact.has(id)).toBe(false);

      // A second sync changes nothing.
      expect(await syncProgram(app, programId)).toMatchObject({ created: 0, cancelled: 0, pending: 3 });
      expect(await triggerRows(app, programId)).toHaveLength(3);
    });

    it('follows contacts: a changed date cancels the old trigger and makes a new one; opt-out, removal and deletion cancel', async () => {
      const [changer, quitter, leaver, deleted, mover] = await Promise.all(
        ['Changer', 'Quitter', 'Leaver', 'Deleted', 'Mover'].map((name) => createContact(acme, { name, attributes: { birthday: '2031-04-04' } })),
      );
      const audienceId = await createAudience(acme, [changer!, quitter!, leaver!, deleted!, mover!]);
      const programId = await insertProgram(app, acme, { audienceId });
      await syncProgram(app, programId);
      expect((await triggerRows(app, programId)).map((row) => row.status)).toEqual(Array(5).fill('pending'));

      // Each change goes through the contacts module's doors; its hooks resync without being asked.
      expect((await acme.rest.put(`/api/contacts/${changer}`, { attributes: { birthday: '2031-09-09' } })).status).toBe(200);
      expect((await acme.rest.put(`/api/contacts/${quitter}`, { optedOut: true })).status).toBe(200);
      expect((await acme.rest.request('DELETE', `/api/audience/${audienceId}/members`, { contactIds: [leaver] })).status).toBe(204);
      expect((await acme.rest.delete(`/api/contacts/${deleted}`)).status).toBe(204);
      expect((await acme.rest.put(`/api/contacts/${mover}`, { timeZone: 'Asia/Tokyo', name: 'Moved' })).status).toBe(200);

      const rows = await triggerRows(app, programId);
      const before = await statuses(programId);
      expect(before).toEqual(
        sorted([
          [changer!, '2031-04-04', 'cancelled'],
          [quitter!, '2031-04-04', 'cancelled'],
          [leaver!, '2031-04-04', 'cancelled'],
          [deleted!, '2031-04-04', 'cancelled'],
          [mover!, '2031-04-04', 'pending'],
          [changer!, '2031-09-09', 'pending'],
        ]),
      );
      // The mover's pending trigger follows the new zone and name: 09:00 in Tokyo is 00:00Z.
      const moved = rows.find((row) => row.contact_id === mover)!;
      expect([moved.trigger_at.toISOString(), moved.contact_name]).toEqual(['2031-04-04T00:00:00.000Z', 'Moved']);

      // Opting back in, re-joining or changing the date back revives the cancelled trigger: still one row per (contact, date).
      await acme.rest.put(`/api/contacts/${quitter}`, { optedOut: false });
      await acme.rest.post(`/api/audience/${audienceId}/members`, { contactIds: [leaver] });
      await acme.rest.put(`/api/contacts/${changer}`, { attributes: { birthday: '2031-04-04' }, name: 'Changed back' });
      expect(await statuses(programId)).toEqual(
        sorted([
          [changer!, '2031-04-04', 'pending'],
          [quitter!, '2031-04-04', 'pending'],
          [leaver!, '2031-04-04', 'pending'],
          [deleted!, '2031-04-04', 'cancelled'],
          [mover!, '2031-04-04', 'pending'],
          [changer!, '2031-09-09', 'cancelled'],
        ]),
      );
      const revived = (await triggerRows(app, programId)).find((row) => row.contact_id === changer && row.attribute_value === '2031-04-04')!;
      expect([revived.trigger_at.toISOString(), revived.contact_name, revived.triggered_at]).toEqual(['2031-04-04T09:00:00.000Z', 'Changed back', null]);
      // A date whose time has passed is not revived.
      await acme.rest.put(`/api/contacts/${quitter}`, { optedOut: true });
      await app.sql('update contacts set opted_out = false where id = ?', [quitter]);
      await syncProgram(app, programId, new Date('2031-04-05T00:00:00Z'));
      expect(await statuses(programId)).toContainEqual([quitter!, '2031-04-04', 'cancelled']);
      // A date that changes back to a new value gets its trigger.
      await acme.rest.put(`/api/contacts/${quitter}`, { attributes: { birthday: '2031-05-05' } });
      expect(await statuses(programId)).toContainEqual([quitter, '2031-05-05', 'pending']);
    });

    it('adds members when they join, and cancels every pending trigger when the audience is deleted', async () => {
      const first = await createContact(acme, { attributes: { birthday: '2032-01-01' } });
      const audienceId = await createAudience(acme, [first]);
      const programId = await insertProgram(app, acme, { audienceId });
      await syncProgram(app, programId);
      const joiner = await createContact(acme, { attributes: { birthday: '2032-02-02' } });
      await acme.rest.post(`/api/audience/${audienceId}/members`, { contactIds: [joiner] });
      expect(await statuses(programId)).toEqual(
        sorted([
          [first, '2032-01-01', 'pending'],
          [joiner, '2032-02-02', 'pending'],
        ]),
      );
      expect((await acme.rest.delete(`/api/audience/${audienceId}`)).status).toBe(204);
      expect((await triggerRows(app, programId)).map((row) => row.status)).toEqual(['cancelled', 'cancelled']);
    });

    it('keeps no pending trigger for a program that is not live and active', async () => {
      const contactId = await createContact(acme, { attributes: { birthday: '2033-03-03' } });
      const audienceId = await createAudience(acme, [contactId]);
      const draft = await insertProgram(app, acme, { audienceId, status: ProgramStatus.draft });
      const campaign = await insertProgram(app, acme, { audienceId, kind: ProgramKind.campaign, liveTrigger: null });
      expect(await syncProgram(app, draft)).toMatchObject({ created: 0, pending: 0 });
      expect(await syncProgram(app, campaign)).toMatchObject({ created: 0, pending: 0 });

      const active = await insertProgram(app, acme, { audienceId });
      expect(await syncProgram(app, active)).toMatchObject({ created: 1, pending: 1 });
      await app.sql(`update programs set status = 'archived' where id = ?`, [active]);
      expect(await syncProgram(app, active)).toMatchObject({ created: 0, cancelled: 1, pending: 0 });
    });
  });
});
