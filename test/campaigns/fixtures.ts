import { createLogger } from '../../src/common/logger.js';
import { CampaignRunner } from '../../src/modules/programs/runner/campaign-runner.js';
import { SimulatedDialer, type SimulatedDialerOptions } from '../../src/modules/programs/runner/simulated-dialer.js';
import { FIRE_BATCH } from '../../src/modules/programs/triggers/trigger-fire.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { testRunner } from '../runner/fixtures.js';

// Everything here goes through the doors (REST and GraphQL); only the runner is built in-process, as src/main.ts builds it.

export const ALWAYS_ANSWERED = { answered: 100, no_answer: 0, busy: 0, voicemail: 0, failed: 0 };
/** Every day, all day (the window's end is exclusive, so 23:59 itself is outside: see `clock`). */
export const ALL_DAY = { startTime: '00:00', endTime: '23:59', daysOfWeek: [1, 2, 3, 4, 5, 6, 7] };
/** Whole-hour zones only, so no contact's clock reads 23:59 unless UTC's minute is 59. */
export const ZONES = ['America/New_York', 'Europe/Paris', 'Asia/Tokyo', 'UTC'];

/**
 * The real time, stepped past minute 59: with whole-hour zones a contact is then never at 23:59,
 * the one minute an ALL_DAY window excludes, so a test never waits on the wall clock.
 */
export function clock(): Date {
  const now = new Date();
  return now.getUTCMinutes() === 59 ? new Date(now.getTime() + 60_000) : now;
}

/** What the runners logged at warn and above (pino: 40 warn, 50 error). */
export const logs: { level: number; msg: string }[] = [];
const sink = { write: (line: string) => void logs.push(JSON.parse(line)) };
export const loggedErrors = () => logs.filter((entry) => entry.level >= 50).map((entry) => entry.msg);

/** A runner as src/main.ts builds it: the root em, a simulated dialer, and the live-program trigger hook. */
export function buildRunner(app: TestApp, dialer: SimulatedDialerOptions, now: () => Date = clock) {
  const simulated = new SimulatedDialer({ speedMs: 0, ...dialer });
  const runner = testRunner(app, { dialer: simulated, logger: createLogger('warn', sink), intervalMs: 5, clock: now });
  runner.onTick.push(async (at) => {
    for (;;) {
      const { triggered, cancelled } = await app.gateway.services.triggers.fireDue(at);
      if (triggered + cancelled < FIRE_BATCH) break;
    }
  });
  return { runner, dialer: simulated };
}

let serial = 0;

export interface ImportedContact {
  id: string;
  phone: string;
  timeZone: string | null;
}

/** POST /api/contacts/import, then the ids read back from GET /api/contacts. */
export async function importContacts(
  org: TestOrganization,
  count: number,
  extra: (i: number) => Record<string, unknown> = () => ({}),
): Promise<ImportedContact[]> {
  const base = ++serial * 1000;
  const contacts = Array.from({ length: count }, (_, i) => ({
    name: `Person ${base + i}`,
    phone: `+1202555${String(base + i).padStart(4, '0')}`,
    timeZone: ZONES[i % ZONES.length],
    ...extra(i),
  }));
  const res = await org.rest.post('/api/contacts/import', { contacts });
  expect([res.status, res.body]).toEqual([201, { imported: count }]);
  const listed = await org.rest.get('/api/contacts?limit=100&sortBy=phone&sortOrder=asc');
  expect(listed.status).toBe(200);
  const byPhone = new Map<string, ImportedContact>(listed.body.data.map((contact: ImportedContact) => [contact.phone, contact]));
  return contacts.map((contact) => {
    const found = byPhone.get(contact.phone)!;
    expect(found.timeZone).toBe(contact.timeZone);
    return { id: found.id, phone: found.phone, timeZone: found.timeZone };
  });
}

export async function createAudience(org: TestOrganization, contactIds: string[]): Promise<string> {
  const audience = await org.rest.post('/api/audience', { name: `Audience ${++serial}` });
  expect(audience.status).toBe(201);
  const added = await org.rest.post(`/api/audience/${audience.body.id}/members`, { contactIds });
  expect(added.status).toBe(200);
  const read = await org.rest.get(`/api/audience/${audience.body.id}`);
  expect(read.body.contactCount).toBe(contactIds.length);
  return audience.body.id;
}

/** start → say → end for an answered call (other outcomes stop at start), spoken by a new agent. */
export async function createFlow(org: TestOrganization): Promise<string> {
  const agent = await org.rest.post('/api/agents', { name: 'Caller', instructions: 'Be brief.', modelConfig: { model: 'builtin/echo' } });
  expect(agent.status).toBe(201);
  expect((await org.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
  const flow = await org.rest.post('/api/call-flows', {
    name: 'Greeting',
    nodes: [
      { id: 'start', type: 'start', agentId: agent.body.id },
      { id: 'say', type: 'say', agentId: agent.body.id, label: 'Say hello' },
      { id: 'end', type: 'end' },
    ],
    edges: [
      { from: 'start', to: 'say', condition: 'answered' },
      { from: 'say', to: 'end' },
    ],
  });
  expect(flow.status).toBe(201);
  return flow.body.id;
}

/** A program created and activated on REST; the settings default to an all-day window and two attempts. */
export async function activeProgram(org: TestOrganization, flowId: string, audienceId: string, settings: Record<string, unknown> = {}): Promise<string> {
  const created = await org.rest.post('/api/programs', {
    name: `Program ${++serial}`,
    kind: 'campaign',
    flowId,
    audienceId,
    callingWindow: ALL_DAY,
    maxConcurrentCalls: 3,
    retryPolicy: { maxAttempts: 2, retryDelayMinutes: 0 },
    ...settings,
  });
  expect(created.status).toBe(201);
  const activated = await org.rest.post(`/api/programs/${created.body.id}/activate`);
  expect([activated.status, activated.body.status]).toEqual([200, 'active']);
  return created.body.id;
}

/** A whole campaign built through the doors: contacts, audience, agent, flow, active program. */
export async function buildCampaign(org: TestOrganization, contacts: number, settings: Record<string, unknown> = {}) {
  const imported = await importContacts(org, contacts);
  const audienceId = await createAudience(
    org,
    imported.map((contact) => contact.id),
  );
  const flowId = await createFlow(org);
  const programId = await activeProgram(org, flowId, audienceId, settings);
  return { contacts: imported, audienceId, flowId, programId };
}

/** Credits granted the operator's way (the CLI's service); answers the new balance. */
export function addCredits(org: TestOrganization, amount: number): Promise<number> {
  return org.grantCredits(amount);
}

export async function creditBalance(org: TestOrganization): Promise<number> {
  const res = await org.rest.get('/api/organization');
  expect(res.status).toBe(200);
  return res.body.creditBalance;
}

export interface Counters {
  id: string;
  status: string;
  totalContacts: number;
  contactsCompleted: number;
  contactsFailed: number;
  contactsPending: number;
  contactsInProgress: number;
  actualStartAt: string | null;
  actualEndAt: string | null;
  /** Finished contacts by outcome (answered, voicemail, noAnswer, busy, failed, doNotCall, notCalled). */
  outcomes: Record<string, number>;
}

/** The execution as endpoint 9 lists it, with the invariant checked on what the door answered. */
export async function readExecution(org: TestOrganization, programId: string, executionId: string): Promise<Counters> {
  const res = await org.rest.get(`/api/programs/${programId}/executions`);
  expect(res.status).toBe(200);
  const execution: Counters = res.body.find((each: Counters) => each.id === executionId);
  expect(execution).toBeDefined();
  expect(execution.contactsCompleted + execution.contactsFailed + execution.contactsPending + execution.contactsInProgress).toBe(execution.totalContacts);
  return execution;
}

/** Ticks (letting the calls each tick placed end) until `done`, reading endpoint 9 after every tick. */
export async function tickUntil(
  runner: CampaignRunner,
  read: () => Promise<Counters>,
  done: (execution: Counters) => boolean,
  each?: (execution: Counters) => void,
  maxTicks = 200,
): Promise<Counters> {
  for (let tick = 0; tick < maxTicks; tick++) {
    await runner.tick();
    const execution = await read();
    each?.(execution);
    if (done(execution)) return execution;
    await runner.idle();
  }
  throw new Error(`not done after ${maxTicks} ticks`);
}

/** Re-reads `read` while a started runner works, until `done`; no deadline of its own (test/helpers/eventually.ts). */
export function poll(read: () => Promise<Counters>, done: (execution: Counters) => boolean, what = 'an execution state'): Promise<Counters> {
  return eventually(read, done, { what });
}
