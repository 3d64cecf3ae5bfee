import {
  ActivateProgramDocument,
  CallFlowDocument,
  CallFlowsDocument,
  CancelExecutionDocument,
  ControlExecutionDocument,
  CreateCallFlowDocument,
  CreateExecutionDocument,
  CreateProgramDocument,
  DeleteCallFlowDocument,
  DeleteProgramDocument,
  ExecutionDocument,
  ExecutionsDocument,
  PauseExecutionDocument,
  ProgramDocument,
  ProgramsDocument,
  ProgramsWithExecutionsDocument,
  ResumeExecutionDocument,
  StartExecutionDocument,
  StopExecutionDocument,
  UpdateCallFlowDocument,
  UpdateProgramDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { KEY_LOOKUP } from '../helpers/users.js';
import { activeCampaign, createAgent, createAudience, createFlow, fieldsOf, flowInput } from './fixtures.js';
import { withCursors } from '../helpers/pages.js';
import { testRunner } from '../runner/fixtures.js';
import { SNAPSHOT_CHUNK } from '../../src/modules/programs/execution-snapshot.js';

// Programs: programs, flows, executions and batching, one describe each (they were one file each), each on an app and a database of its own.
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('programs', () => {
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
      const liveProgram = await acme.rest.post('/api/programs', {
        ...base(),
        kind: 'live',
        liveTrigger: { ...live, source: 'entity', entityType: 'appointment', offsetDays: -365 },
      });
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
      expect(page.body.meta).toEqual(withCursors({ page: 1, limit: 2, total: 3, totalPages: 2, hasNextPage: true, hasPreviousPage: false }));
      expect(page.body.data.map((p: { name: string }) => p.name)).toEqual(['Alpha', 'Beta']);
      // the list shows each program's flow and audience inline, as the single-program routes do
      expect(page.body.data[0]).toMatchObject({ flow: { id: listerFlow }, audience: { id: listerAudience, contactCount: 0 } });
      const beyond = await lister.rest.get('/api/programs?page=3&limit=2');
      expect(beyond.body).toEqual({
        data: [],
        meta: {
          page: 3,
          limit: 2,
          total: 3,
          totalPages: 2,
          hasNextPage: false,
          hasPreviousPage: true,
          nextCursor: null,
          prevCursor: null,
          lastCursor: expect.any(String),
        },
      });
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
});

describe('flows', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    other = await app.organization('Other');
  });
  afterAll(() => app.close());

  /** The same bad input on both doors: the same code and the same field names. */
  async function rejectsOnBothDoors(input: Record<string, unknown>, fields: string[], code = 'BAD_USER_INPUT') {
    const rest = await acme.rest.post('/api/call-flows', input);
    const graphql = await acme.graphql.run(CreateCallFlowDocument, { input: input as never });
    const status = code === 'NOT_FOUND' ? 404 : 400;
    expect(rest.status).toBe(status);
    expect(rest.body.code).toBe(code);
    expect(graphql.errors?.[0]?.extensions.code).toBe(code);
    if (code === 'BAD_USER_INPUT') {
      expect(fieldsOf(rest.body.errors)).toEqual(fields);
      expect(fieldsOf(graphql.errors?.[0]?.extensions.errors)).toEqual(fields);
    }
  }

  describe('call flows', () => {
    it('creates, reads, lists, updates and deletes on both doors', async () => {
      const agentId = await createAgent(acme);
      const rest = await acme.rest.post('/api/call-flows', flowInput(agentId));
      expect(rest.status).toBe(201);
      expect(rest.body).toMatchObject({ organizationId: acme.organizationId, name: 'Reminder flow', description: null });
      expect(rest.body.nodes[0]).toEqual({ id: 'start', type: 'start', agentId, label: null, transferTo: null });
      expect(rest.body.edges[1]).toEqual({ from: 'confirm', to: 'done', condition: 'answered' });
      const { callFlow } = await acme.graphql.ok(CallFlowDocument, { id: rest.body.id });
      expect(callFlow).toEqual(rest.body);

      const { createCallFlow } = await acme.graphql.ok(CreateCallFlowDocument, { input: { name: 'Second', nodes: [{ id: 'a', type: 'start' }] } });
      expect(createCallFlow.edges).toEqual([]);
      const listed = await acme.rest.get('/api/call-flows');
      expect(listed.body.data.map((flow: { id: string }) => flow.id)).toEqual([createCallFlow.id, rest.body.id]);
      const { callFlows } = await acme.graphql.ok(CallFlowsDocument);
      expect(callFlows.data.map((flow) => flow.id)).toEqual([createCallFlow.id, rest.body.id]);

      const updated = await acme.rest.put(`/api/call-flows/${rest.body.id}`, { name: 'Renamed', edges: [] });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ name: 'Renamed', edges: [] });
      expect(updated.body.nodes).toHaveLength(3);
      // Nodes sent alone are checked against the stored edges.
      const { updateCallFlow } = await acme.graphql.ok(UpdateCallFlowDocument, { id: createCallFlow.id, input: { description: 'x' } });
      expect(updateCallFlow.description).toBe('x');
      const orphaned = await acme.rest.put(`/api/call-flows/${rest.body.id}`, { edges: [{ from: 'start', to: 'gone' }] });
      expect(orphaned.status).toBe(400);
      expect(fieldsOf(orphaned.body.errors)).toEqual(['edges.0.to']);

      expect((await acme.rest.delete(`/api/call-flows/${rest.body.id}`)).status).toBe(204);
      expect((await acme.rest.get(`/api/call-flows/${rest.body.id}`)).status).toBe(404);
      const { deleteCallFlow } = await acme.graphql.ok(DeleteCallFlowDocument, { id: createCallFlow.id });
      expect(deleteCallFlow.id).toBe(createCallFlow.id);
      expect((await acme.graphql.run(CallFlowDocument, { id: createCallFlow.id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    });

    it('needs 1 to 200 nodes', async () => {
      await rejectsOnBothDoors({ name: 'Empty', nodes: [] }, ['nodes']);
      const many = Array.from({ length: 201 }, (_, i) => ({ id: `n${i}`, type: i === 0 ? 'start' : 'say', label: 'Hello' }));
      await rejectsOnBothDoors({ name: 'Big', nodes: many }, ['nodes']);
      const ok = await acme.rest.post('/api/call-flows', { name: 'Max', nodes: many.slice(0, 200) });
      expect(ok.status).toBe(201);
    });

    it('needs node ids of 1 to 64 characters, unique', async () => {
      await rejectsOnBothDoors(
        {
          name: 'F',
          nodes: [
            { id: 'start', type: 'start' },
            { id: '', type: 'say' },
          ],
        },
        ['nodes.1.id'],
      );
      await rejectsOnBothDoors(
        {
          name: 'F',
          nodes: [
            { id: 'start', type: 'start' },
            { id: 'x'.repeat(65), type: 'say' },
          ],
        },
        ['nodes.1.id'],
      );
      const ok = await acme.rest.post('/api/call-flows', { name: 'F', nodes: [{ id: 'x'.repeat(64), type: 'start' }] });
      expect(ok.status).toBe(201);
      await rejectsOnBothDoors(
        {
          name: 'F',
          nodes: [
            { id: 'start', type: 'start' },
            { id: 'a', type: 'say', label: 'A' },
            { id: 'b', type: 'say', label: 'B' },
            { id: 'a', type: 'end' },
          ],
        },
        ['nodes.3.id'],
      );
    });

    it('needs exactly one start node and a known node type', async () => {
      await rejectsOnBothDoors({ name: 'F', nodes: [{ id: 'a', type: 'say', label: 'A' }] }, ['nodes']);
      await rejectsOnBothDoors(
        {
          name: 'F',
          nodes: [
            { id: 'a', type: 'start' },
            { id: 'b', type: 'start' },
          ],
        },
        ['nodes'],
      );
      const rest = await acme.rest.post('/api/call-flows', { name: 'F', nodes: [{ id: 'a', type: 'jump' }] });
      expect(rest.status).toBe(400);
      expect(fieldsOf(rest.body.errors)).toEqual(['nodes.0.type']);
    });

    it('needs what each node speaks with: a say its text, an ask its agent, a transfer an E.164 number (400 naming the node, both doors)', async () => {
      const agentId = await createAgent(acme);
      const start = { id: 'start', type: 'start' };
      await rejectsOnBothDoors({ name: 'F', nodes: [start, { id: 'hello', type: 'say' }] }, ['nodes.1.label']);
      await rejectsOnBothDoors({ name: 'F', nodes: [start, { id: 'hello', type: 'say', label: '   ' }] }, ['nodes.1.label']);
      await rejectsOnBothDoors({ name: 'F', nodes: [start, { id: 'q', type: 'ask', label: 'Why?' }] }, ['nodes.1.agentId']);
      await rejectsOnBothDoors({ name: 'F', nodes: [start, { id: 'desk', type: 'transfer' }] }, ['nodes.1.transferTo']);
      await rejectsOnBothDoors({ name: 'F', nodes: [start, { id: 'desk', type: 'transfer', transferTo: '0415 555 0100' }] }, ['nodes.1.transferTo']);
      const rest = await acme.rest.post('/api/call-flows', { name: 'F', nodes: [start, { id: 'q', type: 'ask', label: 'Why?' }] });
      expect(rest.body.errors[0].message).toContain('ask node q');
      const ok = await acme.rest.post('/api/call-flows', {
        name: 'F',
        nodes: [start, { id: 'q', type: 'ask', agentId, label: 'Why?' }, { id: 'desk', type: 'transfer', transferTo: '+14155550100' }],
        edges: [
          { from: 'start', to: 'q' },
          { from: 'q', to: 'desk', condition: 'digit:0' },
        ],
      });
      expect(ok.status).toBe(201);
      expect(ok.body.nodes[2].transferTo).toBe('+14155550100');
      // The same rules on update.
      const update = await acme.rest.put(`/api/call-flows/${ok.body.id}`, {
        nodes: [start, { id: 'q', type: 'ask', agentId, label: 'Why?' }, { id: 'desk', type: 'transfer', transferTo: 'front desk' }],
      });
      expect(update.status).toBe(400);
      expect(fieldsOf(update.body.errors)).toEqual(['nodes.2.transferTo']);
    });

    it('takes edge conditions of the documented forms only', async () => {
      const nodes = [
        { id: 'start', type: 'start' },
        { id: 'end', type: 'end' },
      ];
      for (const condition of ['answered', 'voicemail', 'busy', 'digit:1', 'digit:#', 'said:move my appointment', 'resolved', 'unresolved', 'no_input']) {
        const res = await acme.rest.post('/api/call-flows', { name: 'F', nodes, edges: [{ from: 'start', to: 'end', condition }] });
        expect([condition, res.status]).toEqual([condition, 201]);
      }
      for (const condition of ['digit:12', 'digit:', 'said:', 'maybe', 'DIGIT:1']) {
        await rejectsOnBothDoors({ name: 'F', nodes, edges: [{ from: 'start', to: 'end', condition }] }, ['edges.0.condition']);
      }
    });

    it('needs edges between existing nodes', async () => {
      const nodes = [
        { id: 'start', type: 'start' },
        { id: 'end', type: 'end' },
      ];
      await rejectsOnBothDoors(
        {
          name: 'F',
          nodes,
          edges: [
            { from: 'start', to: 'end' },
            { from: 'start', to: 'nowhere' },
          ],
        },
        ['edges.1.to'],
      );
      await rejectsOnBothDoors({ name: 'F', nodes, edges: [{ from: 'ghost', to: 'end' }] }, ['edges.0.from']);
    });

    it('needs node agents of the same organization (404 otherwise)', async () => {
      const foreignAgent = await createAgent(other);
      const input = flowInput(foreignAgent);
      await rejectsOnBothDoors(input, [], 'NOT_FOUND');
      await rejectsOnBothDoors(flowInput('00000000-0000-4000-8000-000000000000'), [], 'NOT_FOUND');
      await rejectsOnBothDoors(flowInput('not-a-uuid'), ['nodes.0.agentId']);
    });

    it('another organization gets 404 on every id and never sees the flows', async () => {
      const created = await acme.rest.post('/api/call-flows', flowInput());
      const id = created.body.id;
      expect((await other.rest.get(`/api/call-flows/${id}`)).status).toBe(404);
      expect((await other.rest.put(`/api/call-flows/${id}`, { name: 'Mine' })).status).toBe(404);
      expect((await other.rest.delete(`/api/call-flows/${id}`)).status).toBe(404);
      expect((await other.rest.get('/api/call-flows/not-a-uuid')).status).toBe(404);
      for (const result of [
        await other.graphql.run(CallFlowDocument, { id }),
        await other.graphql.run(UpdateCallFlowDocument, { id, input: { name: 'Mine' } }),
        await other.graphql.run(DeleteCallFlowDocument, { id }),
      ]) {
        expect(result.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      }
      expect((await other.rest.get('/api/call-flows')).body.data).toEqual([]);
      expect((await other.graphql.ok(CallFlowsDocument)).callFlows.data).toEqual([]);
      expect((await acme.rest.get(`/api/call-flows/${id}`)).body.name).toBe('Reminder flow');
    });
  });
});

describe('executions', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    other = await app.organization('Other');
    // Starting or resuming an execution with contacts to call needs a credit (test/campaigns/campaigns.test.ts › semantics); no runner spends them here.
    await acme.grantCredits(100);
  });
  afterAll(() => app.close());

  const ENDPOINT_9_KEYS = [
    'actualEndAt',
    'actualStartAt',
    'audienceId',
    'autoPauseRules',
    'contactsCompleted',
    'contactsDoNotCall',
    'contactsFailed',
    'contactsInProgress',
    'contactsPending',
    'createdAt',
    'creditsSpent',
    'flowId',
    'id',
    'nextCallAt',
    'organizationId',
    'outcomes',
    'programId',
    'scheduledStartAt',
    'scheduledStopAt',
    'status',
    'totalContacts',
    'updatedAt',
    'variables',
    'waitingReason',
  ];

  async function invariantHolds(executionId: string) {
    const [row] = await app.sql<Record<string, number>>(
      `select total_contacts, contacts_completed + contacts_failed + contacts_pending + contacts_in_progress as sum,
         (select count(*)::int from execution_contacts where execution_id = e.id) as rows,
         (select count(*)::int from execution_contacts where execution_id = e.id and status = 'pending') as pending_rows, contacts_pending
       from executions e where id = ?`,
      [executionId],
    );
    expect(row!.sum).toBe(row!.total_contacts);
    expect(row!.rows).toBe(row!.total_contacts);
    expect(row!.pending_rows).toBe(row!.contacts_pending);
  }

  describe('starting an execution', () => {
    it('snapshots the non-opted-out members; totalContacts stays fixed when members change', async () => {
      const rule = { nodeId: 'confirm', threshold: 2, resetOnResume: true };
      const campaign = await activeCampaign(acme, 5, 2, {
        autoPauseRules: [rule],
        scheduledStartAt: '2030-01-01T09:00:00.000Z',
        scheduledStopAt: '2030-01-31T09:00:00.000Z',
      });
      const res = await acme.rest.post(`/api/programs/${campaign.programId}/executions`);
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(ENDPOINT_9_KEYS);
      expect(res.body).toMatchObject({
        creditsSpent: 0,
        programId: campaign.programId,
        organizationId: acme.organizationId,
        audienceId: campaign.audienceId,
        flowId: campaign.flowId,
        status: 'scheduled',
        totalContacts: 3,
        contactsPending: 3,
        contactsCompleted: 0,
        contactsFailed: 0,
        contactsInProgress: 0,
        scheduledStartAt: '2030-01-01T09:00:00.000Z',
        scheduledStopAt: '2030-01-31T09:00:00.000Z',
        actualStartAt: null,
        actualEndAt: null,
        autoPauseRules: [rule],
      });
      await invariantHolds(res.body.id);

      // Members added and removed later do not change the execution.
      const more = await createAudience(acme, 2);
      await acme.rest.post(`/api/audience/${campaign.audienceId}/members`, { contactIds: more.contactIds });
      await acme.rest.request('DELETE', `/api/audience/${campaign.audienceId}/members`, { contactIds: [campaign.contactIds[4]] });
      const list = await acme.rest.get(`/api/programs/${campaign.programId}/executions`);
      expect(list.status).toBe(200);
      expect(Array.isArray(list.body)).toBe(true);
      expect(list.body).toHaveLength(1);
      expect(Object.keys(list.body[0]).sort()).toEqual(ENDPOINT_9_KEYS);
      expect(list.body[0].totalContacts).toBe(3);

      // A second execution sees today's members (2 + 3 - 1 = 4 callable), on GraphQL, and lists first.
      const { createExecution } = await acme.graphql.ok(CreateExecutionDocument, { programId: campaign.programId });
      expect(createExecution.totalContacts).toBe(4);
      expect(createExecution.contactsPending).toBe(4);
      await invariantHolds(createExecution.id);
      const { executions } = await acme.graphql.ok(ExecutionsDocument, { programId: campaign.programId });
      expect(executions.map((execution) => execution.id)).toEqual([createExecution.id, res.body.id]);
      const again = await acme.rest.get(`/api/programs/${campaign.programId}/executions`);
      expect(again.body.map((execution: { id: string }) => execution.id)).toEqual([createExecution.id, res.body.id]);
      expect(executions[1]).toEqual(again.body[1]);
    });

    it('copies an audience larger than a chunk off the request: preparing, the runner copies the rest a chunk at a time, then scheduled', async () => {
      const snapshots = app.gateway.services.executionSnapshots;
      const campaign = await activeCampaign(acme, 7, 1); // 6 to call
      snapshots.chunk = 2;
      snapshots.chunksPerTick = 1;
      try {
        const res = await acme.rest.post(`/api/programs/${campaign.programId}/executions`);
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({ status: 'preparing', totalContacts: 2, contactsPending: 2, waitingReason: 'scheduled' });
        await invariantHolds(res.body.id);
        // Nothing dials it yet: start is refused on both doors, saying what it may do.
        const start = await acme.rest.post(`/api/executions/${res.body.id}/start`);
        expect([start.status, start.body.detail]).toEqual([409, expect.stringMatching(/preparing cannot be started.*cancel/)]);
        expect((await acme.graphql.run(StartExecutionDocument, { id: res.body.id })).errors?.[0]?.extensions.code).toBe('CONFLICT');

        // A runner copies a chunk a tick; one that stops and another that starts (a restart) go on from the next contact.
        await testRunner(app).tick();
        expect((await acme.rest.get(`/api/executions/${res.body.id}`)).body).toMatchObject({ status: 'preparing', totalContacts: 4 });
        const next = testRunner(app);
        await next.tick();
        await next.tick();
        const ready = (await acme.rest.get(`/api/executions/${res.body.id}`)).body;
        expect(ready).toMatchObject({ status: 'scheduled', totalContacts: 6, contactsPending: 6 });
        await invariantHolds(res.body.id);
        const [{ distinct }] = await app.sql<{ distinct: number }>(
          'select count(distinct contact_id)::int as distinct from execution_contacts where execution_id = ?',
          [res.body.id],
        );
        expect(distinct).toBe(6);
        const events = (await acme.rest.get('/api/events?limit=100')).body.data.filter((event: any) => event.payload.id === res.body.id);
        expect(events.map((event: any) => [event.type, event.payload.from, event.payload.to])).toEqual([
          ['execution.progress', 'preparing', 'scheduled'],
          ['execution.created', null, 'preparing'],
        ]);
        expect((await acme.graphql.ok(StartExecutionDocument, { id: res.body.id })).startExecution.status).toBe('running');
        await acme.rest.post(`/api/executions/${res.body.id}/stop`);

        // A preparing execution may be cancelled; the runner copies no more of it.
        const { createExecution } = await acme.graphql.ok(CreateExecutionDocument, { programId: campaign.programId });
        expect(createExecution).toMatchObject({ status: 'preparing', totalContacts: 2 });
        expect((await acme.graphql.ok(CancelExecutionDocument, { id: createExecution.id })).cancelExecution.status).toBe('cancelled');
        await testRunner(app).tick();
        expect((await acme.rest.get(`/api/executions/${createExecution.id}`)).body).toMatchObject({ status: 'cancelled', totalContacts: 2 });
        await invariantHolds(createExecution.id);
      } finally {
        snapshots.chunk = SNAPSHOT_CHUNK;
        snapshots.chunksPerTick = 10;
      }
    });

    it('refuses (409) a draft program and a live program, on both doors', async () => {
      const flowId = await createFlow(acme);
      const audienceId = (await createAudience(acme, 1)).id;
      const draft = await acme.rest.post('/api/programs', { name: 'Draft', kind: 'campaign', flowId, audienceId });
      expect((await acme.rest.post(`/api/programs/${draft.body.id}/executions`)).status).toBe(409);
      expect((await acme.graphql.run(CreateExecutionDocument, { programId: draft.body.id })).errors?.[0]?.extensions.code).toBe('CONFLICT');
      const liveTrigger = { attribute: 'birthday', source: 'contact', offsetDays: 0, timeOfDay: '10:00' };
      const liveProgram = await acme.rest.post('/api/programs', { name: 'Live', kind: 'live', flowId, audienceId, liveTrigger });
      await acme.rest.post(`/api/programs/${liveProgram.body.id}/activate`);
      expect((await acme.rest.post(`/api/programs/${liveProgram.body.id}/executions`)).status).toBe(409);
      expect((await acme.graphql.run(CreateExecutionDocument, { programId: liveProgram.body.id })).errors?.[0]?.extensions.code).toBe('CONFLICT');
    });
  });

  describe('controlling an execution', () => {
    async function newExecution(): Promise<string> {
      const campaign = await activeCampaign(acme, 2, 0, {
        autoPauseRules: [
          { nodeId: 'confirm', threshold: 5, resetOnResume: true },
          { nodeId: 'done', threshold: 5, resetOnResume: false },
        ],
      });
      return (await acme.rest.post(`/api/programs/${campaign.programId}/executions`)).body.id;
    }
    const setStatus = (id: string, status: string) => app.sql('update executions set status = ? where id = ?', [status, id]);

    it('walks start → pause → resume → stop, with times, and keeps the counters', async () => {
      const id = await newExecution();
      const started = await acme.rest.post(`/api/executions/${id}/start`);
      expect(started.status).toBe(200);
      expect(started.body.status).toBe('running');
      expect(started.body.actualStartAt).not.toBeNull();
      expect((await acme.graphql.ok(PauseExecutionDocument, { id })).pauseExecution.status).toBe('paused');
      await app.sql(`update executions set node_counts = '{"confirm": 4, "done": 3}' where id = ?`, [id]);
      const resumed = await acme.rest.post(`/api/executions/${id}/resume`);
      expect(resumed.body.status).toBe('running');
      const countsOf = async () =>
        (await app.sql<{ node_counts: Record<string, number> }>('select node_counts from executions where id = ?', [id]))[0]!.node_counts;
      // A resume from a user pause leaves the counts; only one from paused_threshold restarts resetOnResume rules.
      expect(await countsOf()).toEqual({ confirm: 4, done: 3 });
      await setStatus(id, 'paused_threshold');
      expect((await acme.rest.post(`/api/executions/${id}/resume`)).body.status).toBe('running');
      expect(await countsOf()).toEqual({ confirm: 0, done: 3 });
      const stopped = await acme.graphql.ok(StopExecutionDocument, { id });
      expect(stopped.stopExecution.status).toBe('stopped');
      expect(stopped.stopExecution.actualEndAt).not.toBeNull();
      const { execution } = await acme.graphql.ok(ExecutionDocument, { id });
      expect(execution).toMatchObject({ contactsPending: 2, totalContacts: 2, program: { name: 'Campaign' }, audience: { contactCount: 2 } });
      await invariantHolds(id);
      const [pending] = await app.sql<{ n: number }>(`select count(*)::int as n from execution_contacts where execution_id = ? and status = 'pending'`, [id]);
      expect(pending!.n).toBe(2);
    });

    it('cancels a scheduled execution on GraphQL; startExecution and controlExecution start one', async () => {
      const cancelled = await newExecution();
      expect((await acme.graphql.ok(CancelExecutionDocument, { id: cancelled })).cancelExecution.status).toBe('cancelled');
      const run = await newExecution();
      const { startExecution } = await acme.graphql.ok(StartExecutionDocument, { id: run });
      expect(startExecution.status).toBe('running');
      const { controlExecution } = await acme.graphql.ok(ControlExecutionDocument, { id: run, action: 'pause' });
      expect(controlExecution.status).toBe('paused');
      expect((await acme.graphql.ok(ResumeExecutionDocument, { id: run })).resumeExecution.status).toBe('running');
    });

    const forbidden: [string, string][] = [
      ['preparing', 'start'],
      ['preparing', 'pause'],
      ['preparing', 'resume'],
      ['preparing', 'stop'],
      ['scheduled', 'pause'],
      ['scheduled', 'resume'],
      ['scheduled', 'stop'],
      ['running', 'start'],
      ['running', 'resume'],
      ['running', 'cancel'],
      ['paused', 'start'],
      ['paused', 'pause'],
      ['paused', 'cancel'],
      ['paused_no_credits', 'pause'],
      ['paused_threshold', 'cancel'],
      ['completed', 'start'],
      ['completed', 'pause'],
      ['completed', 'resume'],
      ['completed', 'stop'],
      ['completed', 'cancel'],
      ['stopped', 'resume'],
      ['stopped', 'start'],
      ['cancelled', 'start'],
      ['cancelled', 'resume'],
      ['cancelled', 'stop'],
    ];

    it.each(forbidden)('refuses %s → %s with 409 on both doors, leaving it as it was', async (status, action) => {
      const id = await newExecution();
      await setStatus(id, status);
      const rest = await acme.rest.post(`/api/executions/${id}/${action}`);
      expect(rest.status).toBe(409);
      expect(rest.body.code).toBe('CONFLICT');
      const graphql = await acme.graphql.run(ControlExecutionDocument, { id, action: action as never });
      expect(graphql.errors?.[0]?.extensions.code).toBe('CONFLICT');
      expect((await acme.rest.get(`/api/executions/${id}`)).body.status).toBe(status);
    });

    it('another organization gets 404 on every execution route and operation', async () => {
      const campaign = await activeCampaign(acme, 1);
      const id = (await acme.rest.post(`/api/programs/${campaign.programId}/executions`)).body.id;
      expect((await other.rest.get(`/api/programs/${campaign.programId}/executions`)).status).toBe(404);
      expect((await other.rest.post(`/api/programs/${campaign.programId}/executions`)).status).toBe(404);
      expect((await other.rest.get(`/api/executions/${id}`)).status).toBe(404);
      for (const action of ['start', 'pause', 'resume', 'stop', 'cancel']) {
        expect((await other.rest.post(`/api/executions/${id}/${action}`)).status).toBe(404);
        expect((await other.graphql.run(ControlExecutionDocument, { id, action: action as never })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      }
      for (const result of [
        await other.graphql.run(ExecutionsDocument, { programId: campaign.programId }),
        await other.graphql.run(ExecutionDocument, { id }),
        await other.graphql.run(CreateExecutionDocument, { programId: campaign.programId }),
        await other.graphql.run(StartExecutionDocument, { id }),
        await other.graphql.run(CancelExecutionDocument, { id }),
      ]) {
        expect(result.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      }
      expect((await other.rest.get('/api/executions/not-a-uuid')).status).toBe(404);
      expect((await acme.rest.get(`/api/executions/${id}`)).body.status).toBe('scheduled');
    });
  });
});

describe('batching', () => {
  let app: TestApp;
  let statements: string[] | null = null;

  beforeAll(async () => {
    app = await startTestApp();
    // Every SQL statement MikroORM sends goes through the driver connection's executeQuery.
    const connection = app.db.database.orm.em.getConnection() as unknown as {
      executeQuery: (query: string, ...rest: unknown[]) => Promise<unknown>;
    };
    const original = connection.executeQuery.bind(connection);
    connection.executeQuery = (query, ...rest) => {
      // Without the API key lookup, which the key cache sends or not by timing (as recordStatements does).
      if (!KEY_LOOKUP.test(query)) statements?.push(query);
      return original(query, ...rest);
    };
  });
  afterAll(() => app.close());

  /** An organization with `count` active campaigns, each with two executions over a 2-contact audience. */
  async function organizationWith(count: number): Promise<TestOrganization> {
    const org = await app.organization(`Org with ${count}`);
    const flowId = await createFlow(org);
    const audienceId = (await createAudience(org, 2)).id;
    for (let i = 0; i < count; i++) {
      const program = await org.rest.post('/api/programs', { name: `Program ${i}`, kind: 'campaign', flowId, audienceId });
      await org.rest.post(`/api/programs/${program.body.id}/activate`);
      for (let run = 0; run < 2; run++) expect((await org.rest.post(`/api/programs/${program.body.id}/executions`)).status).toBe(201);
    }
    return org;
  }

  async function countStatements(org: TestOrganization): Promise<{ count: number; programs: number }> {
    statements = [];
    const { programs } = await org.graphql.ok(ProgramsWithExecutionsDocument, { limit: 100, executions: 2 });
    const count = statements.length;
    statements = null;
    for (const program of programs.data) {
      expect(program.executions).toHaveLength(2);
      for (const execution of program.executions) {
        expect(execution).toMatchObject({ status: 'scheduled', totalContacts: 2, audience: { contactCount: 2 }, program: { id: program.id } });
      }
    }
    return { count, programs: programs.data.length };
  }

  describe('nested program → executions → audience queries', () => {
    it('cost the same number of SQL statements for 5 and 50 programs', async () => {
      const five = await countStatements(await organizationWith(5));
      const fifty = await countStatements(await organizationWith(50));
      expect(five.programs).toBe(5);
      expect(fifty.programs).toBe(50);
      expect(five.count).toBeGreaterThan(0);
      expect(fifty.count).toBe(five.count);
      // the page and its count, executions, audiences, programs: a handful, not one per row
      expect(fifty.count).toBeLessThanOrEqual(8);
    }, 120_000);
  });
});
