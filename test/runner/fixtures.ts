import { randomInt } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createLogger } from '../../src/common/logger.js';
import { Audience, AudienceMember } from '../../src/modules/contacts/audience.entity.js';
import { Contact } from '../../src/modules/contacts/contact.entity.js';
import { Organization } from '../../src/modules/organizations/organization.entity.js';
import { CallFlow } from '../../src/modules/programs/call-flow.entity.js';
import type { FlowEdge, FlowNode } from '../../src/modules/programs/call-flow.types.js';
import { ExecutionContact } from '../../src/modules/programs/execution-contact.entity.js';
import { Execution } from '../../src/modules/programs/execution.entity.js';
import { Program } from '../../src/modules/programs/program.entity.js';
import { ExecutionStatus, FlowNodeType, ProgramKind, ProgramStatus } from '../../src/modules/programs/program.enums.js';
import type { AutoPauseRule, CallingWindow, RetryPolicy } from '../../src/modules/programs/program.types.js';
import { CampaignRunner, type CampaignRunnerOptions } from '../../src/modules/programs/runner/campaign-runner.js';
import { type CallOutcome, type CallRequest, type CallResult, type Dialer, isFinalOutcome } from '../../src/modules/programs/runner/dialer.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { gatewayRunnerOptions } from '../../src/modules/programs/runner/gateway-runner.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';

/** start → greet → offer → end when answered; start → vm → end on voicemail; start alone otherwise. */
export const FLOW: { nodes: FlowNode[]; edges: FlowEdge[] } = {
  nodes: [
    { id: 'start', type: FlowNodeType.start },
    { id: 'greet', type: FlowNodeType.say },
    { id: 'offer', type: FlowNodeType.ask },
    { id: 'vm', type: FlowNodeType.voicemail },
    { id: 'end', type: FlowNodeType.end },
  ],
  edges: [
    { from: 'start', to: 'greet', condition: 'answered' },
    { from: 'start', to: 'vm', condition: 'voicemail' },
    { from: 'greet', to: 'offer' },
    { from: 'offer', to: 'end' },
    { from: 'vm', to: 'end' },
  ],
};

export interface CampaignOptions {
  org?: TestOrganization;
  contacts?: number;
  /** Cycled over the contacts; null is a contact with no zone. */
  timeZones?: (string | null)[];
  credits?: number;
  callingWindow?: CallingWindow | null;
  maxConcurrentCalls?: number;
  retryPolicy?: RetryPolicy;
  autoPauseRules?: AutoPauseRule[];
  status?: ExecutionStatus;
  scheduledStartAt?: Date | null;
  scheduledStopAt?: Date | null;
}

export interface Campaign {
  org: TestOrganization;
  programId: string;
  executionId: string;
  phones: string[];
}

/**
 * Inserts what the programs helper's "start execution" leaves behind: contacts in an audience,
 * a flow, a program and an execution with one pending execution_contacts row per contact and
 * totalContacts = contactsPending = rows.
 */
export async function createCampaign(app: TestApp, options: CampaignOptions = {}): Promise<Campaign> {
  const org = options.org ?? (await app.organization());
  const em = app.db.database.em.fork() as EntityManager;
  const organization = em.getReference(Organization, org.organizationId);
  await em.nativeUpdate(Organization, { id: org.organizationId }, { unreservedCredits: options.credits ?? 1_000_000 });

  const count = options.contacts ?? 10;
  const zones = options.timeZones ?? [null];
  const base = randomInt(1_000_000, 9_000_000 - count);
  const contacts = Array.from({ length: count }, (_, i) =>
    em.create(Contact, { organization, name: `Person ${i}`, phone: `+1555${base + i}`, timeZone: zones[i % zones.length] }),
  );
  const audience = em.create(Audience, { organization, name: 'Everyone' });
  for (const contact of contacts) em.create(AudienceMember, { organization, audience, contact });
  const flow = em.create(CallFlow, { organization, name: 'Sales', nodes: FLOW.nodes, edges: FLOW.edges });
  const autoPauseRules = options.autoPauseRules ?? [];
  const program = em.create(Program, {
    organization,
    name: 'Spring campaign',
    kind: ProgramKind.campaign,
    status: ProgramStatus.active,
    flow,
    audience,
    callingWindow: options.callingWindow ?? null,
    maxConcurrentCalls: options.maxConcurrentCalls ?? 5,
    retryPolicy: options.retryPolicy ?? { maxAttempts: 1, retryDelayMinutes: 0 },
    autoPauseRules,
  });
  const status = options.status ?? ExecutionStatus.running;
  const execution = em.create(Execution, {
    organization,
    program,
    audienceId: audience.id,
    flowId: flow.id,
    status,
    totalContacts: count,
    contactsPending: count,
    autoPauseRules,
    scheduledStartAt: options.scheduledStartAt ?? null,
    scheduledStopAt: options.scheduledStopAt ?? null,
    actualStartAt: status === ExecutionStatus.running ? new Date() : null,
  });
  for (const contact of contacts) {
    em.create(ExecutionContact, { organization, execution, contact, phone: contact.phone, timeZone: contact.timeZone });
  }
  await em.flush();
  return { org, programId: program.id, executionId: execution.id, phones: contacts.map((contact) => contact.phone) };
}

export interface ExecutionRow {
  status: ExecutionStatus;
  totalContacts: number;
  contactsCompleted: number;
  contactsFailed: number;
  contactsPending: number;
  contactsInProgress: number;
  creditsSpent: number;
  nodeCounts: Record<string, number>;
  actualEndAt: Date | null;
  /** execution_contacts rows per status, read in the same statement as the counters. */
  rows: Record<'pending' | 'in_progress' | 'completed' | 'failed', number>;
}

/** The execution's counters and its rows per status, in one statement so they are one snapshot. */
export async function readExecution(app: TestApp, executionId: string): Promise<ExecutionRow> {
  const [row] = await app.sql<Record<string, any>>(
    `select e.*, (select coalesce(json_object_agg(s.status, s.n), '{}'::json) from
              (select status, count(*)::int as n from execution_contacts where execution_id = e.id group by status) s) as row_counts
       from executions e where e.id = ?`,
    [executionId],
  );
  const rows = typeof row.row_counts === 'string' ? JSON.parse(row.row_counts) : row.row_counts;
  return {
    status: row.status,
    totalContacts: row.total_contacts,
    contactsCompleted: row.contacts_completed,
    contactsFailed: row.contacts_failed,
    contactsPending: row.contacts_pending,
    contactsInProgress: row.contacts_in_progress,
    creditsSpent: row.credits_spent,
    nodeCounts: row.node_counts,
    actualEndAt: row.actual_end_at,
    rows: { pending: 0, in_progress: 0, completed: 0, failed: 0, ...rows },
  };
}

/** The invariant everyone keeps, and the counters true to the rows. */
export function expectConsistent(row: ExecutionRow): void {
  expect(row.contactsCompleted + row.contactsFailed + row.contactsPending + row.contactsInProgress).toBe(row.totalContacts);
  expect(row.rows).toEqual({
    pending: row.contactsPending,
    in_progress: row.contactsInProgress,
    completed: row.contactsCompleted,
    failed: row.contactsFailed,
  });
}

export async function creditBalance(app: TestApp, organizationId: string): Promise<number> {
  const [row] = await app.sql<{ credit_balance: number }>('select credit_balance from organizations where id = ?', [organizationId]);
  return row.credit_balance;
}

/** Wraps a dialer and keeps every call it was asked to place. */
export class RecordingDialer implements Dialer {
  readonly calls: CallRequest[] = [];
  constructor(private readonly inner: Dialer) {}

  async placeCall(call: CallRequest): Promise<CallResult> {
    this.calls.push(call);
    return this.inner.placeCall(call);
  }

  get executionContactIds(): string[] {
    return this.calls.map((call) => call.executionContactId);
  }
}

/** What the test runners logged at warn level and above (pino levels: 40 warn, 50 error). */
export const runnerLogs: { level: number; msg: string; step?: string }[] = [];
const logSink = { write: (line: string) => void runnerLogs.push(JSON.parse(line)) };

/** Logged errors, so a test sees a failure the runner swallowed to keep running. */
export function runnerErrors(): string[] {
  return runnerLogs.filter((entry) => entry.level >= 50).map((entry) => entry.msg);
}

/**
 * A runner wired as main.ts wires the served one (the app's ExecutionEvents, carriers with PUBLIC_URL
 * the app's own address, its streaming parties), logging warnings to `runnerLogs`; the simulated
 * carrier answers at once unless a dialer is given. Every test that ticks a runner builds it here.
 */
export function testRunner(app: TestApp, options: Partial<CampaignRunnerOptions> = {}): CampaignRunner {
  return new CampaignRunner({
    em: app.db.database.em,
    dialer: new SimulatedDialer({ speedMs: 0 }),
    logger: createLogger('warn', logSink),
    intervalMs: 5,
    ...gatewayRunnerOptions(app.gateway.services, { publicUrl: app.baseUrl }),
    ...options,
  });
}

/** Re-reads until `done` holds, calling `each` on every sample; no deadline of its own (test/helpers/eventually.ts). */
export function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, each?: (value: T) => void, what = 'a runner state'): Promise<T> {
  return eventually(read, done, { each, what });
}

/**
 * Ticks the runner (and waits for its calls) until the execution's row is `done`, checking it
 * consistent at each read; bounded by ticks, not time, so a loaded machine only makes it slower.
 */
export async function tickUntilRow(
  app: TestApp,
  runner: CampaignRunner,
  executionId: string,
  done: (row: ExecutionRow) => boolean,
  maxTicks = 200,
): Promise<ExecutionRow> {
  let row: ExecutionRow | undefined;
  for (let tick = 0; tick < maxTicks; tick++) {
    await runner.tick();
    await runner.idle();
    row = await readExecution(app, executionId);
    expectConsistent(row);
    if (done(row)) return row;
  }
  throw new Error(`not done after ${maxTicks} ticks; last ${JSON.stringify(row)}`);
}

/** Resolves once the started runner has run `count` more ticks (its onTick hooks): "while it keeps ticking", counted. */
export function ticks(runner: CampaignRunner, count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const hook = async () => {
      if (++seen < count) return;
      runner.onTick.splice(runner.onTick.indexOf(hook), 1);
      resolve();
    };
    runner.onTick.push(hook);
  });
}

/** What the seeded dialer will make of one contact under maxAttempts: its outcomes, attempt by attempt. */
export function expectedCalls(dialer: SimulatedDialer, phone: string, maxAttempts: number): CallOutcome[] {
  const outcomes: CallOutcome[] = [];
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    outcomes.push(dialer.outcomeOf(phone, attempt));
    if (isFinalOutcome(outcomes.at(-1)!)) break;
  }
  return outcomes;
}
