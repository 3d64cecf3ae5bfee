import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAudience } from '../programs/fixtures.js';
import type { FakeTwilio } from '../support/fake-twilio.js';
import { eventually } from '../helpers/eventually.js';
import { testRunner } from '../runner/fixtures.js';

/** A test app whose carrier is the fake Twilio, with PUBLIC_URL set to the app's own address once it listens. */
export async function startTwilioApp(
  fake: FakeTwilio,
  logTo?: Parameters<typeof startTestApp>[1],
  overrides: Parameters<typeof startTestApp>[0] = {},
  seams: Parameters<typeof startTestApp>[2] = {},
): Promise<TestApp> {
  const app = await startTestApp(
    { telephony: { twilioApiBaseUrl: fake.url, credentialsKey: randomBytes(32), publicUrl: undefined }, ...overrides },
    logTo,
    seams,
  );
  app.config.telephony.publicUrl = app.baseUrl;
  return app;
}

export const FLOW = {
  name: 'Greeting',
  nodes: [
    { id: 'start', type: 'start' },
    { id: 'hello', type: 'say', label: 'Hello from Acme, this is a reminder of your appointment tomorrow.' },
    { id: 'vm', type: 'voicemail', label: 'Sorry we missed you; please call us back.' },
    { id: 'end', type: 'end' },
  ],
  edges: [
    { from: 'start', to: 'hello', condition: 'answered' },
    { from: 'start', to: 'vm', condition: 'voicemail' },
    { from: 'hello', to: 'end' },
    { from: 'vm', to: 'end' },
  ],
};

export interface TwilioCampaign {
  connectionId: string;
  numberId: string;
  programId: string;
  executionId: string;
  contactIds: string[];
  phones: string[];
}

/** Connection, caller ID, contacts, flow, an active Twilio program, credits and a started execution: all through the REST door. */
export async function twilioCampaign(
  org: TestOrganization,
  fake: FakeTwilio,
  options: {
    contacts: number;
    callsPerSecond?: number;
    maxConcurrentCalls?: number;
    maxAttempts?: number;
    credits?: number;
    connectionId?: string;
    program?: Record<string, unknown>;
  },
): Promise<TwilioCampaign> {
  let connectionId = options.connectionId;
  // One connection per account in an organization: the first campaign makes it, the next ones reuse it.
  connectionId ??= (await org.rest.get('/api/carrier-connections')).body.data?.[0]?.id;
  if (!connectionId) {
    const connection = await org.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: fake.accountSid, authToken: fake.authToken });
    expect(connection.status).toBe(201);
    connectionId = connection.body.id as string;
  }
  if (options.callsPerSecond)
    expect((await org.rest.put(`/api/carrier-connections/${connectionId}`, { callsPerSecond: options.callsPerSecond })).status).toBe(200);
  const number = await org.rest.post('/api/phone-numbers', {
    number: `+1415${String(Math.floor(Math.random() * 9_000_000) + 1_000_000)}`,
    carrierConnectionId: connectionId,
  });
  expect(number.status).toBe(201);
  const audience = await createAudience(org, options.contacts);
  const flow = await org.rest.post('/api/call-flows', FLOW);
  expect(flow.status).toBe(201);
  const program = await org.rest.post('/api/programs', {
    name: 'Reminders',
    kind: 'campaign',
    flowId: flow.body.id,
    audienceId: audience.id,
    carrier: 'twilio',
    fromNumberId: number.body.id,
    maxConcurrentCalls: options.maxConcurrentCalls ?? 10,
    retryPolicy: { maxAttempts: options.maxAttempts ?? 1, retryDelayMinutes: 0 },
    ...options.program,
  });
  expect(program.status).toBe(201);
  expect((await org.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
  await org.grantCredits(options.credits ?? 100);
  const execution = await org.rest.post(`/api/programs/${program.body.id}/executions`);
  expect(execution.status).toBe(201);
  expect((await org.rest.post(`/api/executions/${execution.body.id}/start`)).status).toBe(200);
  const contacts = await org.rest.get(`/api/contacts?limit=100`);
  const phones = contacts.body.data
    .filter((contact: { id: string }) => audience.contactIds.includes(contact.id))
    .map((contact: { phone: string }) => contact.phone);
  return { connectionId, numberId: number.body.id, programId: program.body.id, executionId: execution.body.id, contactIds: audience.contactIds, phones };
}

/** Re-reads the execution on the REST door until `done`; no deadline of its own (test/helpers/eventually.ts). */
export function waitForExecution(org: TestOrganization, executionId: string, done: (execution: Record<string, unknown>) => boolean) {
  return eventually(async () => (await org.rest.get(`/api/executions/${executionId}`)).body as Record<string, unknown>, done, {
    what: `execution ${executionId}`,
    everyMs: 25,
  });
}

/**
 * Runs a campaign runner (every 20 ms unless told) until the execution completes, then lets the
 * loopback Twilio's calls finish what they send (`settle`; pass null when the test wants to see
 * what was sent before that).
 */
export async function runUntilCompleted(
  app: TestApp,
  org: TestOrganization,
  executionId: string,
  settle: FakeTwilio | null,
  options: Parameters<typeof testRunner>[1] = { intervalMs: 20 },
): Promise<void> {
  const runner = testRunner(app, options);
  runner.start();
  try {
    await waitForExecution(org, executionId, (execution) => execution.status === 'completed');
  } finally {
    await runner.stop();
  }
  await settle?.settled();
}
