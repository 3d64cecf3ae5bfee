// Seeds the benchmark's data set through the gateway's own REST door, so the rows are what the product
// writes (and a schema change cannot leave the seed behind): 2 organizations, 500 agents, 10,000
// contacts, 50 audiences with members, call flows, 100 active campaign programs × 20 executions in
// final or idle states (the runner is off: none is running), and 2,000 conversations. The measured
// organization (A) holds 90 % of everything; B's rows are interleaved with A's so tenant filtering is real.
import { ApiClient, inParallel } from './client.js';

const CONCURRENCY = 8;
const ZONES = ['America/New_York', 'America/Chicago', 'America/Los_Angeles', 'Europe/Paris', 'Europe/London', 'Asia/Tokyo', 'UTC'];
const ROLES = ['Front desk', 'Billing', 'Appointments', 'Renewals', 'Collections', 'Surveys', 'Onboarding', 'Support'];
const PLANS = ['basic', 'pro', 'enterprise'];

export interface SeedCounts {
  organizations: number;
  agents: number;
  archivedAgents: number;
  contacts: number;
  audiences: number;
  audienceMembers: number;
  callFlows: number;
  programs: number;
  executions: number;
  conversations: number;
  messages: number;
}

export interface SeedResult {
  counts: SeedCounts;
  seconds: number;
  /** The program of GET /api/programs/{id}/executions: the newest of organization A. */
  programId: string;
  /** The agent of POST /api/agents/{id}/test: the newest of organization A (builtin/echo, with a policy). */
  agentId: string;
}

interface Org {
  name: 'A' | 'B';
  api: ApiClient;
}

/** Organization B's share of n rows, spread through A's (every 10th). */
const isB = (index: number) => index % 10 === 9;

function agentInput(i: number, org: Org) {
  const role = ROLES[i % ROLES.length]!;
  const withPolicy = i % 3 !== 1;
  return {
    name: `${role} ${org.name}-${i}`,
    ...(i % 2 === 0 ? { description: `Handles ${role.toLowerCase()} calls for region ${(i % 5) + 1}.` } : {}),
    instructions:
      `You are the ${role.toLowerCase()} assistant of a dental clinic group. Greet the caller, confirm who they are, ` +
      'answer briefly and offer a human when you are unsure. Keep every answer under three sentences.',
    ...(withPolicy ? { policy: 'Never promise refunds or discounts; never reveal another patient’s data.' } : {}),
    // The newest agents (the measured first page) talk to the offline echo model; /test uses one of them.
    modelConfig:
      i % 7 === 3
        ? { model: 'builtin/extractive' }
        : { model: 'builtin/echo', ...(i % 4 === 0 ? { modelSettings: { temperature: 0.2, maxTokens: 300 } } : {}) },
    ...(i % 2 === 1
      ? { voiceConfig: { pipelineMode: ['batch', 'batch', 'sts'][i % 3], voiceId: 'alloy', ...(i % 3 === 2 ? { stsProvider: 'openai' } : {}) } }
      : {}),
    ...(i % 3 === 0 ? { memoryConfig: { enabled: true, lastMessages: 10 } } : {}),
    metadata: { team: role.toLowerCase().replace(' ', '-'), region: `r${(i % 5) + 1}`, tier: PLANS[i % 3] },
    resolutionCriteria: [
      { label: 'identified', description: 'The caller confirmed their identity' },
      ...(i % 2 === 0 ? [{ label: 'resolved', description: 'The request was handled without a human' }] : []),
    ],
  };
}

function contactInput(org: Org, i: number) {
  return {
    name: `Person ${org.name}${i}`,
    phone: `+1${org.name === 'A' ? '415' : '212'}${String(1_000_000 + i).padStart(7, '0')}`,
    timeZone: ZONES[i % ZONES.length],
    attributes: { plan: PLANS[i % 3], renewalDate: `2027-${String((i % 12) + 1).padStart(2, '0')}-15`, customerSince: 2015 + (i % 10) },
    optedOut: i % 31 === 0,
  };
}

function flowInput(i: number, agentId: string) {
  return {
    name: `Reminder flow ${i}`,
    description: 'Greets, confirms the appointment, hands over or leaves a message',
    nodes: [
      { id: 'start', type: 'start', agentId },
      { id: 'greet', type: 'say', agentId, label: 'Say hello' },
      { id: 'confirm', type: 'ask', agentId, label: 'Confirm the appointment' },
      { id: 'human', type: 'transfer', label: 'Hand over to the front desk', transferTo: '+14155550100' },
      { id: 'message', type: 'voicemail', label: 'Leave a reminder' },
      { id: 'done', type: 'end' },
    ],
    edges: [
      { from: 'start', to: 'greet', condition: 'answered' },
      { from: 'start', to: 'message', condition: 'voicemail' },
      { from: 'greet', to: 'confirm' },
      { from: 'confirm', to: 'done', condition: 'answered' },
      { from: 'confirm', to: 'human' },
      { from: 'message', to: 'done' },
    ],
  };
}

/** Reads a whole list, 100 at a time, newest first (the order the gateway's lists use). */
async function listAll<T>(org: Org, path: string): Promise<T[]> {
  const all: T[] = [];
  for (let page = 1; ; page++) {
    const answer = await org.api.get<{ data: T[]; meta: { hasNextPage: boolean } }>(`${path}?limit=100&page=${page}`);
    all.push(...answer.data);
    if (!answer.meta.hasNextPage) return all;
  }
}

/** How many of `total` each of `n` gets, as evenly as possible. */
function spread(total: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.floor(total / n) + (i < total % n ? 1 : 0));
}

export async function seed(orgA: ApiClient, orgB: ApiClient, log: (line: string) => void): Promise<SeedResult> {
  const started = Date.now();
  const orgs: Record<'A' | 'B', Org> = { A: { name: 'A', api: orgA }, B: { name: 'B', api: orgB } };
  const orgOf = (index: number) => (isB(index) ? orgs.B : orgs.A);
  const counts: SeedCounts = {
    organizations: 2,
    agents: 0,
    archivedAgents: 0,
    contacts: 0,
    audiences: 0,
    audienceMembers: 0,
    callFlows: 0,
    programs: 0,
    executions: 0,
    conversations: 0,
    messages: 0,
  };
  const step = (what: string) => log(`  seed: ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);

  // Agents: 450 + 50, most of them activated.
  const agents = await inParallel(
    Array.from({ length: 500 }, (_, i) => i),
    CONCURRENCY,
    async (i) => {
      const org = orgOf(i);
      const agent = await org.api.post<{ id: string }>('/api/agents', agentInput(i, org));
      if (i % 10 < 7) await org.api.post(`/api/agents/${agent.id}/activate`);
      // A program calls through active agents whose providers are configured (none of an sts one's is here).
      const voice = (agentInput(i, org) as { voiceConfig?: { pipelineMode: string } }).voiceConfig;
      return { id: agent.id, org: org.name, callable: i % 10 < 7 && voice?.pipelineMode !== 'sts' };
    },
  );
  counts.agents = agents.length;
  step('500 agents');

  // Contacts: 9,000 + 1,000, imported in bodies under the 1 MB body limit.
  for (const [org, total] of [
    [orgs.A, 9000],
    [orgs.B, 1000],
  ] as const) {
    for (let first = 0; first < total; first += 2000) {
      const contacts = Array.from({ length: Math.min(2000, total - first) }, (_, k) => contactInput(org, first + k));
      await org.api.post('/api/contacts/import', { contacts });
    }
    counts.contacts += total;
  }
  const contactIds = {
    A: (await listAll<{ id: string }>(orgs.A, '/api/contacts')).map((contact) => contact.id),
    B: (await listAll<{ id: string }>(orgs.B, '/api/contacts')).map((contact) => contact.id),
  };
  step('10,000 contacts');

  // Audiences: 45 + 5, 100 to 400 members each, overlapping windows of the organization's contacts.
  const audiences = await inParallel(
    Array.from({ length: 50 }, (_, i) => i),
    CONCURRENCY,
    async (i) => {
      const org = orgOf(i);
      const audience = await org.api.post<{ id: string }>('/api/audience', {
        name: `Segment ${i}: ${PLANS[i % 3]} customers, wave ${(i % 4) + 1}`,
        ...(i % 2 === 0 ? { description: 'Customers due for a reminder call' } : {}),
      });
      const ids = contactIds[org.name];
      const size = 100 + ((i * 37) % 301);
      const start = (i * 180) % ids.length;
      const members = Array.from({ length: size }, (_, k) => ids[(start + k) % ids.length]!);
      await org.api.post(`/api/audience/${audience.id}/members`, { contactIds: members });
      counts.audienceMembers += size;
      return { id: audience.id, org: org.name };
    },
  );
  counts.audiences = audiences.length;
  step('50 audiences');

  // Call flows: 10 + 2 (the flows' agents are the oldest callable ones of each organization).
  const agentsOf = (name: 'A' | 'B') => agents.filter((agent) => agent.org === name && agent.callable);
  const flows = await inParallel(
    Array.from({ length: 20 }, (_, i) => i),
    CONCURRENCY,
    async (i) => {
      const org = i % 10 === 9 ? orgs.B : orgs.A;
      const flow = await org.api.post<{ id: string }>('/api/call-flows', flowInput(i, agentsOf(org.name)[i]!.id));
      return { id: flow.id, org: org.name };
    },
  );
  counts.callFlows = flows.length;
  step(`${flows.length} call flows`);

  // Programs: 90 + 10 active campaigns, mostly through a flow, some through a single agent.
  const inOrg = <T extends { org: 'A' | 'B' }>(rows: T[], name: 'A' | 'B') => rows.filter((row) => row.org === name);
  const programs = await inParallel(
    Array.from({ length: 100 }, (_, i) => i),
    CONCURRENCY,
    async (i) => {
      const org = orgOf(i);
      const ownFlows = inOrg(flows, org.name);
      const ownAudiences = inOrg(audiences, org.name);
      const viaAgent = i % 5 === 4;
      const created = await org.api.post<{ id: string }>('/api/programs', {
        name: `Campaign ${i}: ${PLANS[i % 3]} renewals`,
        ...(i % 2 === 0 ? { description: 'Reminds customers of their renewal date' } : {}),
        kind: 'campaign',
        ...(viaAgent ? { agentId: agentsOf(org.name)[i % agentsOf(org.name).length]!.id } : { flowId: ownFlows[i % ownFlows.length]!.id }),
        audienceId: ownAudiences[i % ownAudiences.length]!.id,
        callingWindow: { startTime: '09:00', endTime: '18:00', daysOfWeek: [1, 2, 3, 4, 5] },
        maxConcurrentCalls: 1 + (i % 10),
        retryPolicy: { maxAttempts: 1 + (i % 3), retryDelayMinutes: 30 },
        ...(!viaAgent && i % 3 === 0 ? { autoPauseRules: [{ nodeId: 'human', threshold: 25, resetOnResume: true }] } : {}),
      });
      await org.api.post(`/api/programs/${created.id}/activate`);
      return { id: created.id, org: org.name };
    },
  );
  counts.programs = programs.length;
  step('100 programs');

  // Executions: 20 per program, one after another so each has its own createdAt; then moved to where
  // finished or idle campaigns sit: 10 cancelled, 5 stopped, 3 paused, the 2 newest still scheduled.
  await inParallel(programs, CONCURRENCY, async (program) => {
    const org = orgs[program.org];
    for (let k = 0; k < 20; k++) {
      const execution = await org.api.post<{ id: string }>(`/api/programs/${program.id}/executions`, {});
      if (k < 10) await org.api.post(`/api/executions/${execution.id}/cancel`);
      else if (k < 18) {
        await org.api.post(`/api/executions/${execution.id}/start`);
        await org.api.post(`/api/executions/${execution.id}/${k < 15 ? 'stop' : 'pause'}`);
      }
      counts.executions++;
    }
  });
  step('2,000 executions');

  // Conversations: 1,800 + 200. A's 60 newest agents (the measured first pages) get 12 each, its
  // other agents share the rest; every third conversation has a message, every tenth is ended.
  const plan: { agentId: string; org: Org }[] = [];
  const listedA = await listAll<{ id: string }>(orgs.A, '/api/agents');
  const heads = listedA.slice(0, 60);
  const tail = listedA.slice(60);
  for (const agent of heads) for (let k = 0; k < 12; k++) plan.push({ agentId: agent.id, org: orgs.A });
  spread(1800 - heads.length * 12, tail.length).forEach((n, i) => {
    for (let k = 0; k < n; k++) plan.push({ agentId: tail[i]!.id, org: orgs.A });
  });
  const listedB = await listAll<{ id: string }>(orgs.B, '/api/agents');
  spread(200, listedB.length).forEach((n, i) => {
    for (let k = 0; k < n; k++) plan.push({ agentId: listedB[i]!.id, org: orgs.B });
  });
  await inParallel(plan, CONCURRENCY, async ({ agentId, org }, i) => {
    const conversation = await org.api.post<{ id: string }>(`/api/agents/${agentId}/conversations`, { title: `Reminder call ${i}` });
    if (i % 3 === 0) {
      await org.api.post(`/api/conversations/${conversation.id}/messages`, { message: 'Hello, I am calling about my appointment on Tuesday.' });
      counts.messages += 2;
      if (i % 10 === 0) await org.api.post(`/api/conversations/${conversation.id}/end`);
    }
    counts.conversations++;
  });
  step('2,000 conversations');

  // Archive some of the older agents (they keep their conversations; lists leave them out), none an active program calls through.
  const called = new Set([...agentsOf('A'), ...agentsOf('B')].map((agent) => agent.id));
  const archived = [...tail.filter((_, i) => i % 20 === 5), ...listedB.filter((_, i) => i % 20 === 5)].filter((agent) => !called.has(agent.id));
  await inParallel(archived, CONCURRENCY, async (agent) => {
    const org = listedB.includes(agent) ? orgs.B : orgs.A;
    await org.api.ok('DELETE', `/api/agents/${agent.id}`);
  });
  counts.archivedAgents = archived.length;

  // The measured records: the newest program, and the newest echo agent with a policy.
  const [program] = (await orgs.A.api.get<{ data: { id: string }[] }>('/api/programs?limit=1')).data;
  const firstPage = (await orgs.A.api.get<{ data: { id: string; hasPolicy: boolean; modelConfig: { model: string } }[] }>('/api/agents?limit=20')).data;
  const agent = firstPage.find((each) => each.hasPolicy && each.modelConfig.model === 'builtin/echo');
  if (!program || !agent) throw new Error('seed: no program or no echo agent with a policy on the first page');
  return { counts, seconds: (Date.now() - started) / 1000, programId: program.id, agentId: agent.id };
}
