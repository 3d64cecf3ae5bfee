import { RequestContext } from '@mikro-orm/core';
import { createLoaders } from '../../src/doors.js';
import { ProgramKind } from '../../src/modules/programs/program.enums.js';
import { SyncProgramTriggersDocument, TriggersDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAudience, createContact, insertProgram, syncProgram } from './fixtures.js';

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
      for (const result of [await client.graphql.run(TriggersDocument, { programId: id }), await client.graphql.run(SyncProgramTriggersDocument, { programId: id })]) {
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
