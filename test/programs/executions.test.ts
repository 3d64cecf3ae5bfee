import {
  CancelExecutionDocument,
  ControlExecutionDocument,
  ExecutionDocument,
  ExecutionsDocument,
  PauseExecutionDocument,
  ResumeExecutionDocument,
  StartExecutionDocument,
  CreateExecutionDocument,
  StopExecutionDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { activeCampaign, createAudience, createFlow } from './fixtures.js';

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  other = await app.organization('Other');
  // Starting or resuming an execution with contacts to call needs a credit (test/campaigns/semantics.test.ts); no runner spends them here.
  await acme.grantCredits(100);
});
afterAll(() => app.close());

const ENDPOINT_9_KEYS = [
  'actualEndAt', 'actualStartAt', 'audienceId', 'autoPauseRules', 'contactsCompleted', 'contactsFailed', 'contactsInProgress',
  'contactsPending', 'createdAt', 'creditsSpent', 'flowId', 'id', 'organizationId', 'programId', 'scheduledStartAt', 'scheduledStopAt', 'status',
  'totalContacts', 'updatedAt',
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
    const campaign = await activeCampaign(acme, 5, 2, { autoPauseRules: [rule], scheduledStartAt: '2030-01-01T09:00:00.000Z', scheduledStopAt: '2030-01-31T09:00:00.000Z' });
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
    const campaign = await activeCampaign(acme, 2, 0, { autoPauseRules: [{ nodeId: 'confirm', threshold: 5, resetOnResume: true }, { nodeId: 'done', threshold: 5, resetOnResume: false }] });
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
    const countsOf = async () => (await app.sql<{ node_counts: Record<string, number> }>('select node_counts from executions where id = ?', [id]))[0]!.node_counts;
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
    ['scheduled', 'pause'], ['scheduled', 'resume'], ['scheduled', 'stop'],
    ['running', 'start'], ['running', 'resume'], ['running', 'cancel'],
    ['paused', 'start'], ['paused', 'pause'], ['paused', 'cancel'],
    ['paused_no_credits', 'pause'], ['paused_threshold', 'cancel'],
    ['completed', 'start'], ['completed', 'pause'], ['completed', 'resume'], ['completed', 'stop'], ['completed', 'cancel'],
    ['stopped', 'resume'], ['stopped', 'start'], ['cancelled', 'start'], ['cancelled', 'resume'], ['cancelled', 'stop'],
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
