import {
  ActivateProgramDocument,
  AudienceDocument,
  CallFlowDocument,
  CampaignExecutionDocument,
  CancelExecutionDocument,
  ControlExecutionDocument,
  DeleteCallFlowDocument,
  DeleteProgramDocument,
  ExecutionsDocument,
  PauseExecutionDocument,
  ProgramDocument,
  ResumeExecutionDocument,
  StartExecutionDocument,
  CreateExecutionDocument,
  StopExecutionDocument,
  SyncProgramTriggersDocument,
  TriggersDocument,
  UpdateCallFlowDocument,
  UpdateProgramDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { ALL_DAY, ALWAYS_ANSWERED, addCredits, buildCampaign, buildRunner, creditBalance, importContacts, loggedErrors, logs, readExecution, tickUntil } from './fixtures.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());
afterEach(() => {
  expect(loggedErrors()).toEqual([]);
  logs.length = 0;
});

it('another organization gets 404 NOT_FOUND on every campaign route and operation of the first, on both doors, while its campaign runs', async () => {
  const acme = await app.organization('Acme');
  const other = await app.organization('Other');
  const { programId, flowId, audienceId, contacts } = await buildCampaign(acme, 6, { maxConcurrentCalls: 1 });
  await addCredits(acme, 20);
  const live = await acme.rest.post('/api/programs', {
    name: 'Live',
    kind: 'live',
    flowId,
    audienceId,
    callingWindow: ALL_DAY,
    liveTrigger: { attribute: 'birthday', source: 'contact', offsetDays: 0, timeOfDay: '09:00' },
  });
  expect(live.status).toBe(201);
  await acme.rest.post(`/api/programs/${live.body.id}/activate`);
  const id: string = (await acme.rest.post(`/api/programs/${programId}/executions`)).body.id;
  expect((await acme.rest.post(`/api/executions/${id}/start`)).body.status).toBe('running');
  // The other organization has contacts of its own and no credits.
  await importContacts(other, 2);

  const { runner } = buildRunner(app, { seed: 'e2e-isolation', weights: ALWAYS_ANSWERED });
  await runner.tick();

  const rest: [string, string, unknown?][] = [
    ['GET', `/api/programs/${programId}`],
    ['PUT', `/api/programs/${programId}`, { name: 'Taken' }],
    ['DELETE', `/api/programs/${programId}`],
    ['POST', `/api/programs/${programId}/activate`],
    ['GET', `/api/programs/${programId}/executions`],
    ['POST', `/api/programs/${programId}/executions`],
    ['GET', `/api/programs/${live.body.id}/triggers`],
    ['GET', `/api/programs/${live.body.id}/triggers?status=pending`],
    ['POST', `/api/programs/${live.body.id}/triggers/sync`],
    ['GET', `/api/executions/${id}`],
    ...['start', 'pause', 'resume', 'stop', 'cancel'].map((action): [string, string] => ['POST', `/api/executions/${id}/${action}`]),
    ['GET', `/api/call-flows/${flowId}`],
    ['PUT', `/api/call-flows/${flowId}`, { name: 'Taken' }],
    ['DELETE', `/api/call-flows/${flowId}`],
    ['GET', `/api/audience/${audienceId}`],
    ['GET', `/api/contacts/${contacts[0]!.id}`],
  ];
  for (const [method, path, body] of rest) {
    const res = await other.rest.request(method, path, body);
    expect([method, path, res.status, res.body?.code]).toEqual([method, path, 404, 'NOT_FOUND']);
  }

  const graphql = [
    other.graphql.run(ProgramDocument, { id: programId }),
    other.graphql.run(UpdateProgramDocument, { id: programId, input: { name: 'Taken' } }),
    other.graphql.run(DeleteProgramDocument, { id: programId }),
    other.graphql.run(ActivateProgramDocument, { id: programId }),
    other.graphql.run(ExecutionsDocument, { programId }),
    other.graphql.run(CreateExecutionDocument, { programId }),
    other.graphql.run(TriggersDocument, { programId: live.body.id }),
    other.graphql.run(SyncProgramTriggersDocument, { programId: live.body.id }),
    other.graphql.run(CampaignExecutionDocument, { id }),
    ...(['start', 'pause', 'resume', 'stop', 'cancel'] as const).map((action) => other.graphql.run(ControlExecutionDocument, { id, action })),
    other.graphql.run(PauseExecutionDocument, { id }),
    other.graphql.run(ResumeExecutionDocument, { id }),
    other.graphql.run(StopExecutionDocument, { id }),
    other.graphql.run(CancelExecutionDocument, { id }),
    other.graphql.run(StartExecutionDocument, { id }),
    other.graphql.run(CallFlowDocument, { id: flowId }),
    other.graphql.run(UpdateCallFlowDocument, { id: flowId, input: { name: 'Taken' } }),
    other.graphql.run(DeleteCallFlowDocument, { id: flowId }),
    other.graphql.run(AudienceDocument, { id: audienceId }),
  ];
  for (const [index, result] of (await Promise.all(graphql)).entries()) {
    expect([index, result.errors?.[0]?.extensions.code]).toEqual([index, 'NOT_FOUND']);
  }
  // Nor do the lists show them.
  expect((await other.rest.get('/api/programs')).body.data).toEqual([]);
  expect((await other.rest.get('/api/call-flows')).body.data).toEqual([]);

  // Untouched: acme's campaign runs on to completed, on acme's credits only.
  expect((await acme.rest.get(`/api/programs/${programId}`)).body).toMatchObject({ name: expect.stringMatching(/^Program /), status: 'active' });
  expect((await acme.rest.get(`/api/call-flows/${flowId}`)).body.name).toBe('Greeting');
  const end = await tickUntil(runner, () => readExecution(acme, programId, id), (execution) => execution.status === 'completed');
  expect(end.contactsCompleted).toBe(6);
  expect(await creditBalance(acme)).toBe(14);
  expect(await creditBalance(other)).toBe(0);
});
