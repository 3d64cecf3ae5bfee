import { CallFlowDocument, CallFlowsDocument, CreateCallFlowDocument, DeleteCallFlowDocument, UpdateCallFlowDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAgent, fieldsOf, flowInput } from './fixtures.js';

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
    await rejectsOnBothDoors({ name: 'F', nodes: [{ id: 'start', type: 'start' }, { id: '', type: 'say' }] }, ['nodes.1.id']);
    await rejectsOnBothDoors({ name: 'F', nodes: [{ id: 'start', type: 'start' }, { id: 'x'.repeat(65), type: 'say' }] }, ['nodes.1.id']);
    const ok = await acme.rest.post('/api/call-flows', { name: 'F', nodes: [{ id: 'x'.repeat(64), type: 'start' }] });
    expect(ok.status).toBe(201);
    await rejectsOnBothDoors(
      { name: 'F', nodes: [{ id: 'start', type: 'start' }, { id: 'a', type: 'say', label: 'A' }, { id: 'b', type: 'say', label: 'B' }, { id: 'a', type: 'end' }] },
      ['nodes.3.id'],
    );
  });

  it('needs exactly one start node and a known node type', async () => {
    await rejectsOnBothDoors({ name: 'F', nodes: [{ id: 'a', type: 'say', label: 'A' }] }, ['nodes']);
    await rejectsOnBothDoors({ name: 'F', nodes: [{ id: 'a', type: 'start' }, { id: 'b', type: 'start' }] }, ['nodes']);
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
      edges: [{ from: 'start', to: 'q' }, { from: 'q', to: 'desk', condition: 'digit:0' }],
    });
    expect(ok.status).toBe(201);
    expect(ok.body.nodes[2].transferTo).toBe('+14155550100');
    // The same rules on update.
    const update = await acme.rest.put(`/api/call-flows/${ok.body.id}`, { nodes: [start, { id: 'q', type: 'ask', agentId, label: 'Why?' }, { id: 'desk', type: 'transfer', transferTo: 'front desk' }] });
    expect(update.status).toBe(400);
    expect(fieldsOf(update.body.errors)).toEqual(['nodes.2.transferTo']);
  });

  it('takes edge conditions of the documented forms only', async () => {
    const nodes = [{ id: 'start', type: 'start' }, { id: 'end', type: 'end' }];
    for (const condition of ['answered', 'voicemail', 'busy', 'digit:1', 'digit:#', 'said:move my appointment', 'resolved', 'unresolved', 'no_input']) {
      const res = await acme.rest.post('/api/call-flows', { name: 'F', nodes, edges: [{ from: 'start', to: 'end', condition }] });
      expect([condition, res.status]).toEqual([condition, 201]);
    }
    for (const condition of ['digit:12', 'digit:', 'said:', 'maybe', 'DIGIT:1']) {
      await rejectsOnBothDoors({ name: 'F', nodes, edges: [{ from: 'start', to: 'end', condition }] }, ['edges.0.condition']);
    }
  });

  it('needs edges between existing nodes', async () => {
    const nodes = [{ id: 'start', type: 'start' }, { id: 'end', type: 'end' }];
    await rejectsOnBothDoors({ name: 'F', nodes, edges: [{ from: 'start', to: 'end' }, { from: 'start', to: 'nowhere' }] }, ['edges.1.to']);
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
