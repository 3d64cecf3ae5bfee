import {
  AddDoNotCallDocument,
  CampaignExecutionDocument,
  ControlExecutionDocument,
  ResumeExecutionDocument,
  StartExecutionDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createLogger } from '../../src/common/logger.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { CALL_CSV_COLUMNS } from '../../src/modules/telephony/call-csv.js';
import {
  addCredits,
  ALL_DAY,
  ALWAYS_ANSWERED,
  activeProgram,
  buildRunner,
  clock,
  createAudience,
  createFlow,
  creditBalance,
  importContacts,
  loggedErrors,
  logs,
  readExecution,
  tickUntil,
} from './fixtures.js';
import { testRunner } from '../runner/fixtures.js';

// The do-not-call list where it matters: at the moment a call is placed. A person opts out on a
// batch call of one program; their number is then never dialed by another program, a live trigger
// or a retry, even under a contact re-imported with a new id; each such contact is counted as
// do_not_call on both doors, in the calls CSV and in the events. And a program runs one execution
// at a time. Everything through the doors; only the runner is built in-process, as src/main.ts builds it.
// Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.

const DAY = 86_400_000;
const dateOf = (instant: number) => new Date(instant).toISOString().slice(0, 10);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());
afterEach(() => {
  expect(loggedErrors()).toEqual([]);
  logs.length = 0;
});

/** A started execution of the program, through the REST door. */
async function started(org: TestOrganization, programId: string): Promise<string> {
  const created = await org.rest.post(`/api/programs/${programId}/executions`);
  expect(created.status).toBe(201);
  expect((await org.rest.post(`/api/executions/${created.body.id}/start`)).status).toBe(200);
  return created.body.id;
}

/** The calls CSV as records keyed by column. */
async function csvOf(org: TestOrganization, executionId: string): Promise<Record<string, string>[]> {
  const res = await fetch(`${app.baseUrl}/api/executions/${executionId}/calls.csv`, { headers: { 'x-api-key': org.apiKey } });
  expect(res.status).toBe(200);
  const [header, ...lines] = (await res.text()).split('\r\n').filter(Boolean);
  expect(header).toBe(CALL_CSV_COLUMNS.join(','));
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, index) => [CALL_CSV_COLUMNS[index]!, value])));
}

/** Calls ever made to a number that were not a suppression (the carrier was asked to dial them). */
async function dialed(phone: string): Promise<number> {
  const [row] = await app.sql<{ count: string | number }>(
    `select count(*) as count from calls where to_number = ? and outcome is distinct from 'do_not_call'`,
    [phone],
  );
  return Number(row!.count);
}

describe('the do-not-call list at dial time', () => {
  it('a number opted out on a batch call is never dialed by another program, a live trigger or a retry, nor under a re-imported contact; each shows do_not_call', async () => {
    const org = await app.organization('Acme opt-out');
    await addCredits(org, 100);
    const birthday = dateOf(Date.now() + 10 * DAY);
    const [quitter, stays, retried] = await importContacts(org, 3, () => ({ attributes: { birthday } }));

    // 1. A batch call whose flow has an opt_out node reached by said:stop calling.
    const agent = await org.rest.post('/api/agents', {
      name: 'Ava',
      instructions: 'Book visits.',
      modelConfig: { model: 'builtin/echo' },
      voiceConfig: { pipelineMode: 'batch' },
    });
    expect((await org.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
    const flow = await org.rest.post('/api/call-flows', {
      name: 'With an opt-out',
      nodes: [
        { id: 'start', type: 'start', agentId: agent.body.id },
        { id: 'ask', type: 'ask', agentId: agent.body.id, label: 'Shall we book a visit?' },
        { id: 'out', type: 'opt_out' },
        { id: 'end', type: 'end' },
      ],
      edges: [
        { from: 'start', to: 'ask', condition: 'answered' },
        { from: 'ask', to: 'out', condition: 'said:stop calling' },
        { from: 'ask', to: 'end' },
      ],
    });
    expect(flow.status).toBe(201);
    const optingProgram = await activeProgram(org, flow.body.id, await createAudience(org, [quitter!.id]), {
      simulatedCaller: { utterances: ['No thanks, please stop calling me.'] },
    });
    const optingExecution = await started(org, optingProgram);
    const voiceRunner = testRunner(app, {
      dialer: new SimulatedDialer({ seed: 'opt-out', speedMs: 0, weights: ALWAYS_ANSWERED }),
      logger: createLogger('warn', { write: (line: string) => void logs.push(JSON.parse(line)) }),
      clock,
      conversations: app.gateway.services.conversations,
    });
    await tickUntil(
      voiceRunner,
      () => readExecution(org, optingProgram, optingExecution),
      (execution) => execution.status === 'completed',
    );
    const [optOutCall] = (await org.rest.get(`/api/calls?executionId=${optingExecution}`)).body.data;
    expect(optOutCall).toMatchObject({ to: quitter!.phone, status: 'completed', reachedNodeIds: ['start', 'ask', 'out'] });
    const entry = await org.rest.get(`/api/do-not-call/${encodeURIComponent(quitter!.phone)}`);
    expect(entry.body).toMatchObject({ phone: quitter!.phone, source: 'call', callId: optOutCall.id, contactId: quitter!.id });
    expect((await org.rest.get(`/api/contacts/${quitter!.id}`)).body.optedOut).toBe(true);
    const optedOut = (await org.rest.get('/api/events?type=contact.opted_out')).body.data as { payload: Record<string, unknown> }[];
    expect(optedOut.map((event) => event.payload)).toEqual([
      { phone: quitter!.phone, contactId: quitter!.id, contactIds: [quitter!.id], callId: optOutCall.id, source: 'call', doNotCallEntryId: entry.body.id },
    ]);
    expect(await dialed(quitter!.phone)).toBe(1);

    // 2. The contact is deleted and imported again: a new id, not opted out, the same number.
    expect((await org.rest.delete(`/api/contacts/${quitter!.id}`)).status).toBe(204);
    expect(
      (await org.rest.post('/api/contacts/import', { contacts: [{ phone: quitter!.phone, name: 'Again', timeZone: 'UTC', attributes: { birthday } }] })).status,
    ).toBe(201);
    const again = (await org.rest.get(`/api/contacts?search=${encodeURIComponent(quitter!.phone)}`)).body.data[0];
    expect(again).toMatchObject({ phone: quitter!.phone, optedOut: false });
    expect(again.id).not.toBe(quitter!.id);

    // 3. Another program over the re-imported contact and one more: the number is suppressed, no credit spent on it.
    const greeting = await createFlow(org);
    const otherProgram = await activeProgram(org, greeting, await createAudience(org, [again.id, stays!.id]));
    const balance = await creditBalance(org);
    const otherExecution = await started(org, otherProgram);
    const { runner } = buildRunner(app, { seed: 'dnc', weights: ALWAYS_ANSWERED });
    const end = await tickUntil(
      runner,
      () => readExecution(org, otherProgram, otherExecution),
      (execution) => execution.status === 'completed',
    );
    expect(end).toMatchObject({ totalContacts: 2, contactsCompleted: 1, contactsFailed: 1, contactsDoNotCall: 1, creditsSpent: 1 });
    // The results say what happened: one answered, one not called for the list.
    expect(end.outcomes).toMatchObject({ answered: 1, doNotCall: 1, voicemail: 0, noAnswer: 0, busy: 0, failed: 0 });
    expect((await org.graphql.ok(CampaignExecutionDocument, { id: otherExecution })).execution).toMatchObject({
      contactsDoNotCall: 1,
      contactsFailed: 1,
      creditsSpent: 1,
    });
    expect(await creditBalance(org)).toBe(balance - 1);
    expect(await dialed(quitter!.phone)).toBe(1);
    const calls = (await org.rest.get(`/api/calls?executionId=${otherExecution}`)).body.data as Record<string, unknown>[];
    const suppressed = calls.find((call) => call.to === quitter!.phone);
    expect(suppressed).toMatchObject({
      contactId: again.id,
      status: 'canceled',
      outcome: 'do_not_call',
      creditsCharged: 0,
      carrierCallId: null,
      answeredAt: null,
      errorText: 'Not placed: the number is on the do-not-call list',
    });
    const csv = await csvOf(org, otherExecution);
    expect(csv.find((row) => row.phone === quitter!.phone)).toMatchObject({
      contactId: again.id,
      contactStatus: 'failed',
      attempts: '0',
      lastCallStatus: 'canceled',
      outcome: 'do_not_call',
      creditsCharged: '0',
    });
    expect(csv.find((row) => row.phone === stays!.phone)).toMatchObject({ contactStatus: 'completed', outcome: 'answered', creditsCharged: '1' });
    const ended = (await org.rest.get('/api/events?type=call.ended&limit=100')).body.data as { payload: Record<string, unknown> }[];
    expect(
      ended
        .filter((event) => event.payload.executionId === otherExecution)
        .map((event) => [event.payload.to, event.payload.outcome])
        .sort(),
    ).toEqual(
      [
        [quitter!.phone, 'do_not_call'],
        [stays!.phone, 'answered'],
      ].sort(),
    );

    // 4. A live program's trigger for the re-imported contact fires, and the call is suppressed at the claim.
    const live = await org.rest.post('/api/programs', {
      name: 'Birthday calls',
      kind: 'live',
      flowId: greeting,
      audienceId: await createAudience(org, [again.id]),
      callingWindow: ALL_DAY,
      liveTrigger: { attribute: 'birthday', source: 'contact', offsetDays: 0, timeOfDay: '09:00' },
    });
    expect((await org.rest.post(`/api/programs/${live.body.id}/activate`)).status).toBe(200);
    const later = new Date(`${dateOf(Date.parse(birthday) + DAY)}T12:00:00Z`);
    const { runner: liveRunner } = buildRunner(app, { seed: 'dnc-live', weights: ALWAYS_ANSWERED }, () => later);
    await liveRunner.tick();
    expect(
      (await org.rest.get(`/api/programs/${live.body.id}/triggers?status=triggered`)).body.map((trigger: { contactId: string }) => trigger.contactId),
    ).toEqual([again.id]);
    const [liveExecution] = (await org.rest.get(`/api/programs/${live.body.id}/executions`)).body;
    const liveEnd = await tickUntil(
      liveRunner,
      () => readExecution(org, live.body.id, liveExecution.id),
      (execution) => execution.status === 'completed',
    );
    expect(liveEnd).toMatchObject({ totalContacts: 1, contactsDoNotCall: 1, contactsFailed: 1, creditsSpent: 0 });
    expect(await dialed(quitter!.phone)).toBe(1);

    // 5. A retry: the first attempt is not answered, the number is put on the list (GraphQL), the second attempt is suppressed.
    const retryProgram = await activeProgram(org, greeting, await createAudience(org, [retried!.id]), {
      retryPolicy: { maxAttempts: 3, retryDelayMinutes: 0 },
    });
    const retryExecution = await started(org, retryProgram);
    const { runner: unanswered } = buildRunner(app, { seed: 'dnc-retry', weights: { answered: 0, no_answer: 100, busy: 0, voicemail: 0, failed: 0 } });
    await unanswered.tick();
    await unanswered.idle();
    expect(await readExecution(org, retryProgram, retryExecution)).toMatchObject({ status: 'running', contactsPending: 1, creditsSpent: 1 });
    expect((await org.graphql.ok(AddDoNotCallDocument, { input: { phone: retried!.phone, note: 'by email' } })).addDoNotCall.source).toBe('manual');
    const retryEnd = await tickUntil(
      unanswered,
      () => readExecution(org, retryProgram, retryExecution),
      (execution) => execution.status === 'completed',
    );
    expect(retryEnd).toMatchObject({ contactsDoNotCall: 1, contactsFailed: 1, creditsSpent: 1 });
    expect(retryEnd.outcomes.doNotCall).toBe(1);
    const attempts = (await org.rest.get(`/api/calls?executionId=${retryExecution}&sortBy=queuedAt&sortOrder=asc`)).body.data as Record<string, unknown>[];
    expect(attempts.map((call) => [call.attempt, call.status, call.outcome])).toEqual([
      [1, 'no_answer', 'no_answer'],
      [2, 'canceled', 'do_not_call'],
    ]);
    expect(await dialed(retried!.phone)).toBe(1);
  }, 60_000);
});

// Security review 4, Info: +4402071234567 and +442071234567 passed as two numbers; a trunk 0 after the country code is now dropped where it is one.
describe('one number, however its trunk 0 is written', () => {
  it('a contact written with a trunk 0 after its country code is suppressed by the entry written without it, and the other way round; an Italian 0 stays part of the number', async () => {
    const org = await app.organization('Acme trunk zero');
    await addCredits(org, 100);
    const phones = ['+4402071234567', '+33612345678', '+390612345678'];
    const imported = await org.rest.post('/api/contacts/import', {
      contacts: phones.map((phone, index) => ({ phone, name: `Trunk ${index}`, timeZone: 'UTC' })),
    });
    expect(imported.status).toBe(201);
    const contacts = (await org.rest.get('/api/contacts?limit=100&sortBy=name&sortOrder=asc')).body.data as { id: string; phone: string }[];
    expect(contacts.map((contact) => contact.phone)).toEqual(['+442071234567', '+33612345678', '+390612345678']);
    // The same number again, in its other spelling, is the same contact.
    const twice = await org.rest.post('/api/contacts', { phone: '+442071234567', name: 'Again', timeZone: 'UTC' });
    expect([twice.status, twice.body.code]).toEqual([409, 'CONFLICT']);
    for (const phone of ['+442071234567', '+330612345678', '+39612345678']) expect((await org.rest.post('/api/do-not-call', { phone })).status).toBe(201);
    const execution = await started(
      org,
      await activeProgram(
        org,
        await createFlow(org),
        await createAudience(
          org,
          contacts.map((contact) => contact.id),
        ),
      ),
    );
    const program = (await org.rest.get(`/api/executions/${execution}`)).body.programId as string;
    const { runner } = buildRunner(app, { seed: 'trunk-zero', weights: ALWAYS_ANSWERED });
    await tickUntil(
      runner,
      () => readExecution(org, program, execution),
      (state) => state.status === 'completed',
    );
    const calls = (await org.rest.get(`/api/calls?executionId=${execution}&limit=100`)).body.data as { to: string; outcome: string }[];
    expect(Object.fromEntries(calls.map((call) => [call.to, call.outcome]))).toEqual({
      '+442071234567': 'do_not_call',
      '+33612345678': 'do_not_call',
      '+390612345678': 'answered',
    });
  });
});

describe('one program, one running execution', () => {
  it('refuses a second start or a resume while another execution of the program runs (409, the same on both doors); the scheduler waits; the database refuses it too', async () => {
    const org = await app.organization('Acme one run');
    await addCredits(org, 100);
    const contacts = await importContacts(org, 2);
    const programId = await activeProgram(
      org,
      await createFlow(org),
      await createAudience(
        org,
        contacts.map((contact) => contact.id),
      ),
    );
    const first = await started(org, programId);
    const second = (await org.rest.post(`/api/programs/${programId}/executions`)).body.id as string;

    const refused = await org.rest.post(`/api/executions/${second}/start`);
    expect([refused.status, refused.body.code]).toEqual([409, 'CONFLICT']);
    expect(refused.body.detail).toBe(
      `Execution ${first} of this program is running, and a program runs one execution at a time so that no contact is called twice: stop it or wait for it to complete, then start this one`,
    );
    const gql = await org.graphql.run(StartExecutionDocument, { id: second });
    expect([gql.errors?.[0]?.extensions.code, gql.errors?.[0]?.message]).toEqual(['CONFLICT', refused.body.detail]);
    const control = await org.graphql.run(ControlExecutionDocument, { id: second, action: 'start' });
    expect(control.errors?.[0]?.message).toBe(refused.body.detail);
    expect((await org.rest.get(`/api/executions/${second}`)).body.status).toBe('scheduled');

    // A paused execution does not run: another may start; resuming the first is then refused.
    expect((await org.rest.post(`/api/executions/${first}/pause`)).status).toBe(200);
    expect((await org.rest.post(`/api/executions/${second}/start`)).status).toBe(200);
    const resume = await org.rest.post(`/api/executions/${first}/resume`);
    expect([resume.status, resume.body.detail]).toEqual([409, refused.body.detail.replace(first, second)]);
    expect((await org.graphql.run(ResumeExecutionDocument, { id: first })).errors?.[0]?.message).toBe(resume.body.detail);

    // The database holds the rule whatever writes the row.
    await expect(app.sql(`update executions set status = 'running' where id = ?`, [first])).rejects.toThrow(
      /executions_program_id_running_unique|duplicate key/,
    );

    // A scheduled execution whose start time has come waits while another of the program runs.
    const scheduled = await org.rest.post(`/api/programs/${programId}/executions`, { scheduledStartAt: new Date(Date.now() - 60_000).toISOString() });
    const { runner } = buildRunner(app, { seed: 'one-run', weights: ALWAYS_ANSWERED });
    await runner.tick();
    await runner.idle();
    expect((await org.rest.get(`/api/executions/${scheduled.body.id}`)).body.status).toBe('scheduled');
    // That tick also called the running execution's two contacts to its end.
    expect((await org.rest.get(`/api/executions/${second}`)).body.status).toBe('completed');
    expect((await org.rest.post(`/api/executions/${first}/stop`)).status).toBe(200);
    await runner.tick();
    await runner.idle();
    expect((await org.rest.get(`/api/executions/${scheduled.body.id}`)).body.status).not.toBe('scheduled');
  });

  it('never has a contact in two live calls of one program: a number still on the line for a paused execution waits for that call to end', async () => {
    const org = await app.organization('Acme one call');
    await addCredits(org, 100);
    const [busy, free] = await importContacts(org, 2);
    const programId = await activeProgram(org, await createFlow(org), await createAudience(org, [busy!.id, free!.id]));
    const first = await started(org, programId);
    expect((await org.rest.post(`/api/executions/${first}/pause`)).status).toBe(200);
    // The paused execution's call to `busy` is still live (as a carrier would leave it).
    await app.sql(
      `insert into calls (id, created_at, updated_at, organization_id, execution_id, program_id, direction, to_number, status, attempt, carrier, queued_at, reached_node_ids, credits_charged)
       values (gen_random_uuid(), now(), now(), ?, ?, ?, 'outbound', ?, 'in_progress', 1, 'simulator', now(), '[]'::jsonb, 1)`,
      [org.organizationId, first, programId, busy!.phone],
    );
    const second = await started(org, programId);
    const { runner } = buildRunner(app, { seed: 'one-call', weights: ALWAYS_ANSWERED });
    await runner.tick();
    await runner.idle();
    const waiting = await readExecution(org, programId, second);
    expect(waiting).toMatchObject({ contactsCompleted: 1, contactsPending: 1, creditsSpent: 1 });
    const calls = (await org.rest.get(`/api/calls?executionId=${second}`)).body.data as { to: string }[];
    expect(calls.map((call) => call.to)).toEqual([free!.phone]);
    // Once that call ends, the contact is called.
    await app.sql(`update calls set status = 'completed', outcome = 'answered', ended_at = now() where execution_id = ?`, [first]);
    const end = await tickUntil(
      runner,
      () => readExecution(org, programId, second),
      (execution) => execution.status === 'completed',
    );
    expect(end).toMatchObject({ contactsCompleted: 2, creditsSpent: 2 });
  });
});
