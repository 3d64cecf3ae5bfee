import { UpdateProgramDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createContact, createAudience } from '../triggers/fixtures.js';
import { createFlow } from './fixtures.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

const live = { attribute: 'birthday', source: 'contact' as const, offsetDays: 0, timeOfDay: '09:00' };
const programRow = async (id: string) => (await app.sql<{ status: string; name: string }>('select status, name from programs where id = ?', [id]))[0];
const triggerStatuses = async (id: string) =>
  (await app.sql<{ status: string }>('select status from contact_triggers where program_id = ? order by status', [id])).map((row) => row.status);

/** Makes the trigger sync write its rows and then fail, until the returned function restores it. */
function failingSync(): () => void {
  const triggers = app.gateway.services.triggers;
  const original = triggers.syncProgram;
  triggers.syncProgram = async (...args: Parameters<typeof original>) => {
    await original.apply(triggers, args);
    throw new Error('sync failed');
  };
  return () => void (triggers.syncProgram = original);
}

describe('a program change and its trigger sync', () => {
  it('commit together or not at all, on activate and on update', async () => {
    const contactId = await createContact(acme, { attributes: { birthday: '2035-05-05' } });
    const audienceId = await createAudience(acme, [contactId]);
    const flowId = await createFlow(acme);
    const created = await acme.rest.post('/api/programs', { name: 'Birthdays', kind: 'live', flowId, audienceId, liveTrigger: live });
    expect(created.status).toBe(201);
    const id = created.body.id;

    let restore = failingSync();
    try {
      expect((await acme.rest.post(`/api/programs/${id}/activate`)).status).toBe(500);
    } finally {
      restore();
    }
    // Neither the activation nor the triggers it synced were kept.
    expect(await programRow(id)).toMatchObject({ status: 'draft' });
    expect(await triggerStatuses(id)).toEqual([]);

    expect((await acme.rest.post(`/api/programs/${id}/activate`)).status).toBe(200);
    expect(await triggerStatuses(id)).toEqual(['pending']);

    restore = failingSync();
    try {
      const result = await acme.graphql.run(UpdateProgramDocument, { id, input: { name: 'Renamed', liveTrigger: { ...live, attribute: 'other' } } });
      expect(result.errors?.[0]?.extensions.code).toBe('INTERNAL_SERVER_ERROR');
    } finally {
      restore();
    }
    expect(await programRow(id)).toMatchObject({ status: 'active', name: 'Birthdays' });
    expect(await triggerStatuses(id)).toEqual(['pending']);
  });
});

describe('a program that is not a draft', () => {
  it('cannot change its kind (409 on both doors); a draft can, and sending the same kind is no change', async () => {
    const audienceId = await createAudience(acme, [await createContact(acme)]);
    const flowId = await createFlow(acme);
    const created = await acme.rest.post('/api/programs', { name: 'Spring', kind: 'campaign', flowId, audienceId });
    const id = created.body.id;
    const toLive = { kind: 'live', liveTrigger: live };
    // A draft may still become live and back.
    expect((await acme.rest.put(`/api/programs/${id}`, toLive)).body.kind).toBe('live');
    expect((await acme.rest.put(`/api/programs/${id}`, { kind: 'campaign', liveTrigger: null })).body.kind).toBe('campaign');
    expect((await acme.rest.post(`/api/programs/${id}/activate`)).status).toBe(200);

    const rest = await acme.rest.put(`/api/programs/${id}`, toLive);
    expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
    const graphql = await acme.graphql.run(UpdateProgramDocument, { id, input: toLive as never });
    expect(graphql.errors?.[0]?.extensions.code).toBe('CONFLICT');
    expect((await app.sql<{ kind: string }>('select kind from programs where id = ?', [id]))[0]!.kind).toBe('campaign');
    const same = await acme.rest.put(`/api/programs/${id}`, { kind: 'campaign', name: 'Spring 2' });
    expect([same.status, same.body.name]).toEqual([200, 'Spring 2']);
  });
});
