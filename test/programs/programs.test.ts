import {
  ActivateProgramDocument,
  CreateProgramDocument,
  DeleteProgramDocument,
  ProgramDocument,
  ProgramsDocument,
  UpdateProgramDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAgent, createAudience, createFlow, fieldsOf } from './fixtures.js';

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let flowId: string;
let audienceId: string;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  other = await app.organization('Other');
  flowId = await createFlow(acme);
  audienceId = (await createAudience(acme, 2)).id;
});
afterAll(() => app.close());

const base = () => ({ name: 'Reminders', kind: 'campaign', flowId, audienceId });
const live = { attribute: 'appointmentDate', source: 'contact', offsetDays: -1, timeOfDay: '09:30' };

async function rejectsOnBothDoors(input: Record<string, unknown>, fields: string[], code = 'BAD_USER_INPUT') {
  const rest = await acme.rest.post('/api/programs', input);
  const graphql = await acme.graphql.run(CreateProgramDocument, { input: input as never });
  expect(rest.body.code).toBe(code);
  expect(rest.status).toBe(code === 'NOT_FOUND' ? 404 : 400);
  expect(graphql.errors?.[0]?.extensions.code).toBe(code);
  if (code === 'BAD_USER_INPUT') {
    expect(fieldsOf(rest.body.errors)).toEqual(fields);
    expect(fieldsOf(graphql.errors?.[0]?.extensions.errors)).toEqual(fields);
  }
}

describe('program input rules, the same on both doors', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['an unknown kind', { kind: 'broadcast' }, ['kind']],
    ['both flowId and agentId', { agentId: '00000000-0000-4000-8000-000000000000' }, ['flowId']],
    ['neither flowId nor agentId', { flowId: null }, ['flowId']],
    ['no audienceId', { audienceId: undefined }, ['audienceId']],
    ['a stop before the start', { scheduledStartAt: '2030-01-02T00:00:00Z', scheduledStopAt: '2030-01-01T00:00:00Z' }, ['scheduledStopAt']],
    ['a window that ends before it starts', { callingWindow: { startTime: '17:00', endTime: '09:00', daysOfWeek: [1] } }, ['callingWindow.endTime']],
    ['a window time that is not HH:MM', { callingWindow: { startTime: '9:00', endTime: '17:00', daysOfWeek: [1] } }, ['callingWindow.startTime']],
    ['no days in the window', { callingWindow: { startTime: '09:00', endTime: '17:00', daysOfWeek: [] } }, ['callingWindow.daysOfWeek']],
    ['a day 8', { callingWindow: { startTime: '09:00', endTime: '17:00', daysOfWeek: [1, 8] } }, ['callingWindow.daysOfWeek']],
    ['a day twice', { callingWindow: { startTime: '09:00', endTime: '17:00', daysOfWeek: [2, 2] } }, ['callingWindow.daysOfWeek']],
    ['0 concurrent calls', { maxConcurrentCalls: 0 }, ['maxConcurrentCalls']],
    ['101 concurrent calls', { maxConcurrentCalls: 101 }, ['maxConcurrentCalls']],
    ['11 attempts', { retryPolicy: { maxAttempts: 11, retryDelayMinutes: 0 } }, ['retryPolicy.maxAttempts']],
    ['a delay over a week', { retryPolicy: { maxAttempts: 2, retryDelayMinutes: 10081 } }, ['retryPolicy.retryDelayMinutes']],
    ['a threshold below 1', { autoPauseRules: [{ nodeId: 'confirm', threshold: 0, resetOnResume: false }] }, ['autoPauseRules.0.threshold']],
    ['a rule on a node the flow lacks', { autoPauseRules: [{ nodeId: 'nope', threshold: 1, resetOnResume: false }] }, ['autoPauseRules.0.nodeId']],
    ['21 rules', { autoPauseRules: Array.from({ length: 21 }, () => ({ nodeId: 'confirm', threshold: 1, resetOnResume: false })) }, ['autoPauseRules']],
    ['a live program without liveTrigger', { kind: 'live' }, ['liveTrigger']],
    ['a campaign with liveTrigger', { liveTrigger: live }, ['liveTrigger']],
    ['an entity trigger without entityType', { kind: 'live', liveTrigger: { ...live, source: 'entity' } }, ['liveTrigger.entityType']],
    ['an offset over a year', { kind: 'live', liveTrigger: { ...live, offsetDays: 366 } }, ['liveTrigger.offsetDays']],
    ['a trigger attribute too long', { kind: 'live', liveTrigger: { ...live, attribute: 'a'.repeat(65) } }, ['liveTrigger.attribute']],
    ['a window end past 24:00', { callingWindow: { startTime: '09:00', endTime: '24:01', daysOfWeek: [1] } }, ['callingWindow.endTime']],
    ['a window start of 24:00', { callingWindow: { startTime: '24:00', endTime: '24:00', daysOfWeek: [1] } }, ['callingWindow.startTime']],
    ['a bad trigger source', { kind: 'live', liveTrigger: { ...live, source: 'team' } }, ['liveTrigger.source']],
  ])('rejects %s', async (_name, change, fields) => {
    await rejectsOnBothDoors({ ...base(), ...change }, fields);
  });

  it('accepts every limit at its edge', async () => {
    const res = await acme.rest.post('/api/programs', {
      ...base(),
      callingWindow: { startTime: '00:00', endTime: '23:59', daysOfWeek: [1, 2, 3, 4, 5, 6, 7] },
      maxConcurrentCalls: 100,
      retryPolicy: { maxAttempts: 10, retryDelayMinutes: 10080 },
      autoPauseRules: Array.from({ length: 20 }, () => ({ nodeId: 'confirm', threshold: 1, resetOnResume: true })),
    });
    expect(res.status).toBe(201);
    const liveProgram = await acme.rest.post('/api/programs', { ...base(), kind: 'live', liveTrigger: { ...live, source: 'entity', entityType: 'appointment', offsetDays: -365 } });
    expect(liveProgram.status).toBe(201);
    // All day: 24:00 ends the window at midnight, on both doors.
    const allDay = { startTime: '00:00', endTime: '24:00', daysOfWeek: [1, 2, 3, 4, 5, 6, 7] };
    const restAllDay = await acme.rest.post('/api/programs', { ...base(), callingWindow: allDay });
    expect([restAllDay.status, restAllDay.body.callingWindow]).toEqual([201, allDay]);
    const graphqlAllDay = await acme.graphql.run(CreateProgramDocument, { input: { ...base(), callingWindow: allDay } as never });
    expect(graphqlAllDay.errors).toBeUndefined();
    expect(liveProgram.body.liveTrigger).toEqual({ ...live, source: 'entity', entityType: 'appointment', offsetDays: -365 });
  });

  it('answers 404 for a flow, agent or audience of another organization', async () => {
    const foreignFlow = await createFlow(other);
    const foreignAgent = await createAgent(other);
    const foreignAudience = (await createAudience(other, 0)).id;
    await rejectsOnBothDoors({ ...base(), flowId: foreignFlow }, [], 'NOT_FOUND');
    await rejectsOnBothDoors({ ...base(), flowId: null, agentId: foreignAgent }, [], 'NOT_FOUND');
    await rejectsOnBothDoors({ ...base(), audienceId: foreignAudience }, [], 'NOT_FOUND');
  });
});

describe('programs', () => {
  it('creates a draft, updates, activates once and deletes on both doors', async () => {
    const agentId = await createAgent(acme);
    const rest = await acme.rest.post('/api/programs', { ...base(), flowId: undefined, agentId, maxConcurrentCalls: 3 });
    expect(rest.status).toBe(201);
    expect(rest.body).toMatchObject({ status: 'draft', kind: 'campaign', maxConcurrentCalls: 3, flow: null, autoPauseRules: [], liveTrigger: null });
    expect(rest.body.agent.id).toBe(agentId);
    expect(rest.body.audience).toMatchObject({ id: audienceId, contactCount: 2 });
    expect(rest.body.retryPolicy).toEqual({ maxAttempts: 1, retryDelayMinutes: 0 });
    expect(rest.body).not.toHaveProperty('executions');
    const { program } = await acme.graphql.ok(ProgramDocument, { id: rest.body.id });
    expect(program).toMatchObject({ id: rest.body.id, agent: { id: agentId }, flow: null, audience: { id: audienceId } });

    // Switching from the agent to a flow: the merged program is checked as a whole.
    const both = await acme.rest.put(`/api/programs/${rest.body.id}`, { flowId });
    expect(both.status).toBe(400);
    expect(fieldsOf(both.body.errors)).toEqual(['flowId']);
    const { updateProgram } = await acme.graphql.ok(UpdateProgramDocument, { id: rest.body.id, input: { flowId, agentId: null, name: 'Renamed' } });
    expect(updateProgram).toMatchObject({ name: 'Renamed', flow: { id: flowId }, agent: null, maxConcurrentCalls: 3 });
    const badWindow = await acme.graphql.run(UpdateProgramDocument, {
      id: rest.body.id,
      input: { callingWindow: { startTime: '10:00', endTime: '10:00', daysOfWeek: [1] } },
    });
    expect(fieldsOf(badWindow.errors?.[0]?.extensions.errors)).toEqual(['callingWindow.endTime']);

    const activated = await acme.rest.post(`/api/programs/${rest.body.id}/activate`);
    expect(activated.status).toBe(200);
    expect(activated.body.status).toBe('active');
    expect((await acme.rest.post(`/api/programs/${rest.body.id}/activate`)).status).toBe(409);
    expect((await acme.graphql.run(ActivateProgramDocument, { id: rest.body.id })).errors?.[0]?.extensions.code).toBe('CONFLICT');

    expect((await acme.rest.delete(`/api/programs/${rest.body.id}`)).status).toBe(204);
    expect((await acme.rest.get(`/api/programs/${rest.body.id}`)).status).toBe(404);
  });

  it('lists pages with search and sort on both doors', async () => {
    const lister = await app.organization('Lister');
    const listerFlow = await createFlow(lister);
    const listerAudience = (await createAudience(lister, 0)).id;
    for (const name of ['Alpha', 'Beta', 'Gamma']) {
      expect((await lister.rest.post('/api/programs', { name, kind: 'campaign', flowId: listerFlow, audienceId: listerAudience })).status).toBe(201);
    }
    const page = await lister.rest.get('/api/programs?limit=2&sortBy=name&sortOrder=asc');
    expect(page.body.meta).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2, hasNextPage: true, hasPreviousPage: false });
    expect(page.body.data.map((p: { name: string }) => p.name)).toEqual(['Alpha', 'Beta']);
    // the list shows each program's flow and audience inline, as the single-program routes do
    expect(page.body.data[0]).toMatchObject({ flow: { id: listerFlow }, audience: { id: listerAudience, contactCount: 0 } });
    const beyond = await lister.rest.get('/api/programs?page=3&limit=2');
    expect(beyond.body).toEqual({ data: [], meta: { page: 3, limit: 2, total: 3, totalPages: 2, hasNextPage: false, hasPreviousPage: true } });
    const { programs } = await lister.graphql.ok(ProgramsDocument, { search: 'amm' });
    expect(programs.data.map((p) => p.name)).toEqual(['Gamma']);
    expect((await lister.rest.get('/api/programs?sortBy=secret')).status).toBe(400);
  });

  it('another organization gets 404 on every id and never sees the programs', async () => {
    const created = await acme.rest.post('/api/programs', base());
    const id = created.body.id;
    for (const res of [
      await other.rest.get(`/api/programs/${id}`),
      await other.rest.put(`/api/programs/${id}`, { name: 'Mine' }),
      await other.rest.post(`/api/programs/${id}/activate`),
      await other.rest.delete(`/api/programs/${id}`),
      await other.rest.get('/api/programs/not-a-uuid'),
    ]) {
      expect(res.status).toBe(404);
    }
    for (const result of [
      await other.graphql.run(ProgramDocument, { id }),
      await other.graphql.run(UpdateProgramDocument, { id, input: { name: 'Mine' } }),
      await other.graphql.run(ActivateProgramDocument, { id }),
      await other.graphql.run(DeleteProgramDocument, { id }),
    ]) {
      expect(result.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    }
    expect((await other.rest.get('/api/programs')).body.meta.total).toBe(0);
    expect((await other.graphql.ok(ProgramsDocument, {})).programs.data).toEqual([]);
    expect((await acme.rest.get(`/api/programs/${id}`)).body.status).toBe('draft');
  });
});
