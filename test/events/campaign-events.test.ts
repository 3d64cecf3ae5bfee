import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { ALWAYS_ANSWERED, addCredits, buildCampaign, buildRunner, clock, readExecution, tickUntil } from '../campaigns/fixtures.js';

// A campaign run by the runner writes its execution's story to the outbox: created, started,
// completed with their reasons, progress coalesced to one a second (by the runner's clock), and
// one call.started and one call.ended per call, each shaped as REST shows the resource.
let app: TestApp;
let org: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  org = await app.organization('Acme');
  await addCredits(org, 100);
}, 60_000);
afterAll(() => app?.close());

type Event = { id: string; type: string; createdAt: string; payload: Record<string, any> };

async function eventsOf(executionId: string): Promise<Event[]> {
  const res = await org.rest.get('/api/events?limit=100&sortOrder=asc');
  expect(res.status).toBe(200);
  expect(res.body.meta.total).toBeLessThanOrEqual(100);
  return (res.body.data as Event[]).filter((event) => (event.type.startsWith('execution.') ? event.payload.id : event.payload.executionId) === executionId);
}

async function run(settings: Record<string, unknown>, contacts: number, now: () => Date, advance: () => void = () => {}) {
  const { programId } = await buildCampaign(org, contacts, { retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 }, ...settings });
  const created = await org.rest.post(`/api/programs/${programId}/executions`);
  const executionId = created.body.id as string;
  expect((await org.rest.post(`/api/executions/${executionId}/start`)).status).toBe(200);
  const { runner } = buildRunner(app, { seed: `events-${executionId}`, weights: ALWAYS_ANSWERED }, now);
  const done = await tickUntil(runner, () => readExecution(org, programId, executionId), (execution) => execution.status === 'completed', advance);
  await runner.stop();
  return { executionId, done };
}

it('writes created, started and completed with their reasons, one progress event while the clock stands still, and one call.started and call.ended per call', async () => {
  const pinned = clock();
  const { executionId, done } = await run({ maxConcurrentCalls: 3 }, 6, () => pinned);
  const events = await eventsOf(executionId);

  const moves = events.filter((event) => event.type.startsWith('execution.') && event.type !== 'execution.progress');
  expect(moves.map((event) => [event.type, event.payload.from, event.payload.to, event.payload.reason])).toEqual([
    ['execution.created', null, 'scheduled', 'user'],
    ['execution.started', 'scheduled', 'running', 'user'],
    ['execution.completed', 'running', 'completed', 'no_contacts_left'],
  ]);
  // The execution as REST shows it after each move.
  expect(moves[2]!.payload).toMatchObject({ ...done, status: 'completed', contactsCompleted: 6, contactsPending: 0, contactsInProgress: 0 });
  const rest = (await org.rest.get(`/api/executions/${executionId}`)).body;
  expect(Object.keys(moves[2]!.payload).sort()).toEqual([...Object.keys(rest), 'from', 'to', 'reason'].sort());

  // Six calls recorded at one instant of the runner's clock: one progress event, with the counters of the
  // first recorded batch (calls that end together are recorded together: 1 to 3 of the 3 concurrent calls).
  const progress = events.filter((event) => event.type === 'execution.progress');
  expect(progress).toHaveLength(1);
  const first = progress[0]!.payload;
  expect(first).toMatchObject({ id: executionId });
  expect(first.contactsCompleted).toBeGreaterThanOrEqual(1);
  expect(first.contactsCompleted).toBeLessThanOrEqual(3);
  expect(first.contactsCompleted + first.contactsFailed + first.contactsPending + first.contactsInProgress).toBe(6);

  const calls = (await org.rest.get(`/api/calls?executionId=${executionId}&limit=100`)).body.data as Record<string, unknown>[];
  expect(calls).toHaveLength(6);
  const ended = events.filter((event) => event.type === 'call.ended');
  const started = events.filter((event) => event.type === 'call.started');
  expect(ended.map((event) => event.payload.id).sort()).toEqual(calls.map((call) => call.id).sort());
  expect(started.map((event) => event.payload.id).sort()).toEqual(calls.map((call) => call.id).sort());
  for (const event of ended) {
    const call = calls.find((each) => each.id === event.payload.id)!;
    expect(Object.keys(event.payload).sort()).toEqual(Object.keys(call).sort()); // jsonb keeps keys in its own order
    expect(event.payload).toMatchObject({ status: call.status, outcome: call.outcome, endedAt: call.endedAt, durationSeconds: call.durationSeconds });
  }
  expect(started.every((event) => event.payload.status === 'in_progress' && event.payload.endedAt === null)).toBe(true);
  // Each call starts before it ends; the execution completes after its last call ended.
  for (const event of ended) expect(started.find((each) => each.payload.id === event.payload.id)!.createdAt <= event.createdAt).toBe(true);
  expect(ended.every((event) => event.createdAt <= moves[2]!.createdAt)).toBe(true);
}, 60_000);

it('writes a progress event for every call when each is recorded more than a second after the last', async () => {
  let now = clock();
  const { executionId } = await run({ maxConcurrentCalls: 1 }, 3, () => now, () => {
    now = new Date(now.getTime() + 1500);
  });
  const progress = (await eventsOf(executionId)).filter((event) => event.type === 'execution.progress');
  expect(progress.map((event) => event.payload.contactsCompleted)).toEqual([1, 2, 3]);
}, 60_000);
