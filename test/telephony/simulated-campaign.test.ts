import { CallsDocument, ExecutionCallsDocument } from '../generated/graphql.js';
import { createLogger } from '../../src/common/logger.js';
import { CampaignRunner } from '../../src/modules/programs/runner/campaign-runner.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAudience } from '../programs/fixtures.js';
import { FLOW, waitForExecution } from './fixtures.js';

// An offline campaign through the doors: the simulated carrier drives the same call records a
// real one does, and what a finished execution shows (calls on both doors, the CSV) adds up to
// its counters.
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  other = await app.organization('Other');
});
afterAll(() => app?.close());

function parseCsv(text: string): Record<string, string>[] {
  const [header, ...rows] = text.trimEnd().split('\r\n').map((line) => line.split(','));
  return rows.map((row) => Object.fromEntries(header.map((column, index) => [column, row[index] ?? ''])));
}

it('a finished campaign shows each contact’s calls, on both doors and as CSV, adding up to its counters', async () => {
  const audience = await createAudience(acme, 12);
  const flow = await acme.rest.post('/api/call-flows', FLOW);
  const number = await acme.rest.post('/api/phone-numbers', { number: '+14155550142', label: 'Caller ID' });
  const program = await acme.rest.post('/api/programs', {
    name: 'Offline', kind: 'campaign', flowId: flow.body.id, audienceId: audience.id, fromNumberId: number.body.id,
    maxConcurrentCalls: 4, retryPolicy: { maxAttempts: 2, retryDelayMinutes: 0 },
  });
  expect(program.body).toMatchObject({ carrier: 'simulator', fromNumberId: number.body.id });
  expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
  await acme.grantCredits(100);
  const execution = (await acme.rest.post(`/api/programs/${program.body.id}/executions`)).body;
  expect((await acme.rest.post(`/api/executions/${execution.id}/start`)).status).toBe(200);

  const runner = new CampaignRunner({ em: app.db.database.em, dialer: new SimulatedDialer({ seed: 'offline', speedMs: 5 }), logger: createLogger('silent'), intervalMs: 10 });
  runner.start();
  let done: Record<string, number & string>;
  try {
    done = (await waitForExecution(acme, execution.id, (row) => row.status === 'completed')) as never;
  } finally {
    await runner.stop();
  }

  // REST: every call, each one final, through the simulator with the program's caller ID.
  const rest = (await acme.rest.get(`/api/calls?executionId=${execution.id}&limit=100`)).body;
  const calls = rest.data as Record<string, unknown>[];
  expect(rest.meta.total).toBe(calls.length);
  expect(calls.length).toBe(done.creditsSpent);
  expect(calls.every((call) => call.carrier === 'simulator' && /^SM[0-9a-f]{32}$/.test(String(call.carrierCallId)) && call.from === '+14155550142')).toBe(true);
  expect(calls.every((call) => ['completed', 'busy', 'no_answer', 'failed'].includes(String(call.status)) && call.endedAt !== null)).toBe(true);
  const connected = calls.filter((call) => call.outcome === 'answered' || call.outcome === 'voicemail');
  expect(connected.every((call) => call.status === 'completed' && call.answeredAt !== null && Number(call.durationSeconds) > 0)).toBe(true);
  expect(connected.filter((call) => call.outcome === 'answered').every((call) => JSON.stringify(call.reachedNodeIds) === '["start","hello","end"]')).toBe(true);
  expect(calls.filter((call) => !connected.includes(call)).every((call) => (call.reachedNodeIds as string[]).length === 0 && call.durationSeconds === 0)).toBe(true);

  // Each contact: its calls numbered 1, 2, …; the last one decides whether it was reached.
  const byContact = new Map<string, Record<string, unknown>[]>();
  for (const call of calls) byContact.set(String(call.contactId), [...(byContact.get(String(call.contactId)) ?? []), call]);
  expect([...byContact.keys()].sort()).toEqual([...audience.contactIds].sort());
  const last = new Map([...byContact].map(([contactId, list]) => [contactId, list.sort((a, b) => Number(a.attempt) - Number(b.attempt)).at(-1)!]));
  for (const list of byContact.values()) expect(list.map((call) => call.attempt)).toEqual(list.map((_call, index) => index + 1));
  const reached = [...last.values()].filter((call) => call.outcome === 'answered' || call.outcome === 'voicemail').length;
  expect(done).toMatchObject({ contactsCompleted: reached, contactsFailed: 12 - reached, contactsPending: 0, contactsInProgress: 0 });

  // GraphQL: the same calls, nested under the execution and at the root.
  const nested = await acme.graphql.ok(ExecutionCallsDocument, { id: execution.id, limit: 100 });
  expect(nested.execution.calls.data.map((call) => call.id).sort()).toEqual(calls.map((call) => call.id).sort());
  const root = await acme.graphql.ok(CallsDocument, { executionId: execution.id, limit: 100 });
  expect(root.calls.meta.total).toBe(calls.length);

  // The CSV: one row per contact with its last call, matching the list.
  const csv = await fetch(`${app.baseUrl}/api/executions/${execution.id}/calls.csv`, { headers: { 'x-api-key': acme.apiKey } });
  expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
  const rows = parseCsv(await csv.text());
  expect(rows).toHaveLength(12);
  for (const row of rows) {
    const call = last.get(row.contactId)!;
    expect({ lastCallId: row.lastCallId, outcome: row.outcome, attempts: Number(row.attempts), phone: row.phone }).toEqual({
      lastCallId: call.id, outcome: call.outcome, attempts: call.attempt, phone: call.to,
    });
    expect(row.contactStatus).toBe(call.outcome === 'answered' || call.outcome === 'voicemail' ? 'completed' : 'failed');
  }

  // Another organization sees none of it.
  expect((await other.rest.get(`/api/calls/${calls[0].id}`)).status).toBe(404);
  expect((await other.rest.get(`/api/calls?executionId=${execution.id}`)).body.meta.total).toBe(0);
  expect((await fetch(`${app.baseUrl}/api/executions/${execution.id}/calls.csv`, { headers: { 'x-api-key': other.apiKey } })).status).toBe(404);
});
