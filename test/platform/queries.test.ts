import {
  BenchmarkAgentsDocument,
  BenchmarkProgramsDocument,
  LookAheadAgentsBatchedDocument,
  LookAheadAgentsDocument,
  LookAheadProgramsBatchedDocument,
  LookAheadProgramsDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { recordStatements } from '../helpers/users.js';
import { createAudience, createFlow } from '../programs/fixtures.js';
import { countedOnly } from '../helpers/pages.js';

// What a query costs in statements: look-ahead loading and the benchmark's queries, one describe each (they were one file each), each on an app and a database of its own.
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('look-ahead', () => {
  // A page's relations are read with the page when the selection asks for them plainly (look-ahead):
  // the answer must be the one the per-relation batches give, whatever the arguments, and the REST
  // door's; arguments the relation refuses are refused as before; nothing crosses organizations.
  let app: TestApp;
  let org: TestOrganization;
  let other: TestOrganization;
  const agentIds: string[] = [];
  const programIds: string[] = [];

  beforeAll(async () => {
    app = await startTestApp();
    org = await app.organization('Look-ahead');
    other = await app.organization('Look-ahead other');
    for (let i = 0; i < 3; i++) {
      const agent = await org.rest.post('/api/agents', { name: `Agent ${i}`, instructions: 'Answer briefly.', modelConfig: { model: 'builtin/echo' } });
      expect(agent.status).toBe(201);
      agentIds.push(agent.body.id);
      for (let k = 0; k < 2 + i; k++) {
        const started = await org.rest.post(`/api/agents/${agent.body.id}/conversations`, { title: k % 2 === 0 ? `Renewal ${k}` : `Billing ${k}` });
        expect(started.status).toBe(201);
        if (k === 0) expect((await org.rest.post(`/api/conversations/${started.body.id}/messages`, { message: 'Hello' })).status).toBe(200);
      }
    }
    // The other organization's agent has conversations too: none may show up in org's nested reads.
    const foreign = await other.rest.post('/api/agents', { name: 'Foreign', instructions: 'Answer briefly.', modelConfig: { model: 'builtin/echo' } });
    expect((await other.rest.post(`/api/agents/${foreign.body.id}/conversations`, { title: 'Renewal foreign' })).status).toBe(201);

    const flowId = await createFlow(org);
    const audience = await createAudience(org, 3);
    for (let i = 0; i < 2; i++) {
      const program = await org.rest.post('/api/programs', {
        name: `Program ${i}`,
        kind: 'campaign',
        flowId,
        audienceId: audience.id,
        autoPauseRules: [{ nodeId: 'start', threshold: 5 + i, resetOnResume: i === 0 }],
      });
      expect(program.status).toBe(201);
      programIds.push(program.body.id);
      expect((await org.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
      for (let run = 0; run < 3; run++) {
        const execution = await org.rest.post(`/api/programs/${program.body.id}/executions`);
        expect(execution.status).toBe(201);
        if (run === 0) expect((await org.rest.post(`/api/executions/${execution.body.id}/cancel`)).status).toBe(200);
      }
    }
    await org.grantCredits(100);
  }, 120_000);
  afterAll(() => app.close());

  describe('agents → conversations read with the page', () => {
    const cases = [
      { conversations: 2 },
      { conversations: 2, page: 2 },
      { conversations: 5, sortOrder: 'asc' as const },
      { conversations: 5, status: 'active' as const },
      { conversations: 5, search: 'renewal' },
      { conversations: 1, page: 9 },
    ];

    it.each(cases)('answers what the batches answer, in one statement fewer: %j', async (args) => {
      let read: Awaited<ReturnType<typeof org.graphql.ok<any, any>>>;
      const withPage = await recordStatements(app, async () => {
        read = await org.graphql.ok(LookAheadAgentsDocument, { limit: 10, ...args });
      });
      let batched: any;
      const separately = await recordStatements(app, async () => {
        batched = await org.graphql.ok(LookAheadAgentsBatchedDocument, { limit: 10, ...args });
      });
      const strip = (page: any) => page.agents.data.map(({ id, conversations }: any) => ({ id, conversations }));
      expect(strip(read)).toEqual(strip(batched));
      // the conversations came with the page: no batch of their own, and fewer statements
      expect(withPage.filter((sql) => /row_number\(\)/.test(sql))).toEqual([]);
      expect(separately.filter((sql) => /row_number\(\)/.test(sql))).toHaveLength(1);
      expect(withPage.length).toBeLessThan(separately.length);

      // The REST door answers each agent's page the same.
      for (const agent of read.agents.data) {
        const query = new URLSearchParams(
          Object.entries({ limit: args.conversations, page: args.page, sortOrder: args.sortOrder, status: args.status, search: args.search })
            .filter(([, value]) => value !== undefined)
            .map(([key, value]): [string, string] => [key, String(value)]),
        );
        const rest = await org.rest.get(`/api/agents/${agent.id}/conversations?${query}`);
        expect(rest.status).toBe(200);
        expect(agent.conversations.meta).toEqual(countedOnly(rest.body.meta));
        expect(agent.conversations.data.map((conversation: any) => ({ ...conversation, agent: undefined }))).toEqual(
          rest.body.data.map((conversation: any) => ({
            id: conversation.id,
            status: conversation.status,
            title: conversation.title,
            createdAt: conversation.createdAt,
            updatedAt: conversation.updatedAt,
            agentId: conversation.agentId,
            agent: undefined,
          })),
        );
        for (const conversation of agent.conversations.data) expect(conversation.agent.id).toBe(agent.id);
      }
    });

    it('refuses a relation argument out of range as before, on both doors', async () => {
      const graphql = await org.graphql.run(LookAheadAgentsDocument, { limit: 5, conversations: 1000 });
      expect(graphql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      const rest = await org.rest.get(`/api/agents/${agentIds[0]}/conversations?limit=1000`);
      expect(rest.status).toBe(400);
      expect(rest.body.code).toBe('BAD_USER_INPUT');
    });

    it('a sort field the relation does not allow is refused as by its batches', async () => {
      const read = await org.graphql.run(LookAheadAgentsDocument, { limit: 5, conversations: 2, sortBy: 'bogus' });
      const batched = await org.graphql.run(LookAheadAgentsBatchedDocument, { limit: 5, conversations: 2, sortBy: 'bogus' });
      expect(read.errors?.length).toBeGreaterThan(0);
      expect(read.errors!.map((error) => [error.extensions.code, error.message])).toEqual(
        batched.errors!.filter((error: any) => !String(error.path).includes('again')).map((error) => [error.extensions.code, error.message]),
      );
      expect(read.errors!.every((error) => error.extensions.code === 'BAD_USER_INPUT')).toBe(true);
      const rest = await org.rest.get(`/api/agents/${agentIds[0]}/conversations?sortBy=bogus`);
      expect(rest.status).toBe(400);
      expect(rest.body.code).toBe('BAD_USER_INPUT');
    });

    it('a variable of the wrong type is a 400 BAD_USER_INPUT, before any statement', async () => {
      const statements = await recordStatements(app, async () => {
        const result = await org.graphql.run(LookAheadAgentsDocument, { limit: 5, conversations: 'many' as unknown as number });
        expect(result.status).toBe(400);
        expect(result.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      });
      expect(statements.filter((sql) => /conversations/.test(sql))).toEqual([]);
    });

    it("another organization's page holds only its own conversations", async () => {
      const theirs = await other.graphql.ok(LookAheadAgentsDocument, { limit: 10, conversations: 10 });
      expect(theirs.agents.data).toHaveLength(1);
      expect(theirs.agents.data[0]!.conversations.data.map((conversation) => conversation.title)).toEqual(['Renewal foreign']);
      const ours = await org.graphql.ok(LookAheadAgentsDocument, { limit: 10, conversations: 10, search: 'foreign' });
      expect(ours.agents.data.flatMap((agent) => agent.conversations.data)).toEqual([]);
      const agent = await other.rest.get(`/api/agents/${agentIds[0]}/conversations`);
      expect(agent.status).toBe(404);
      expect(agent.body.code).toBe('NOT_FOUND');
    });
  });

  describe('programs → executions read with the page', () => {
    const cases = [{ executions: 2 }, { executions: 2, page: 2 }, { executions: 5, status: 'cancelled' as const }, { executions: 5, page: 3 }];

    it.each(cases)('answers what the batches answer, in one statement fewer: %j', async (args) => {
      let read: any;
      const withPage = await recordStatements(app, async () => {
        read = await org.graphql.ok(LookAheadProgramsDocument, { limit: 10, ...args });
      });
      let batched: any;
      const separately = await recordStatements(app, async () => {
        batched = await org.graphql.ok(LookAheadProgramsBatchedDocument, { limit: 10, always: true, ...args });
      });
      expect(read).toEqual(batched);
      // the executions came with the page: no batch of their own, and fewer statements
      expect(withPage.filter((sql) => /row_number\(\)/.test(sql))).toEqual([]);
      expect(separately.filter((sql) => /row_number\(\)/.test(sql))).toHaveLength(1);
      expect(withPage.length).toBeLessThan(separately.length);

      // endpoint 9 answers the same executions (REST pages without a status filter).
      if (!args.status) {
        for (const program of read.programs.data) {
          const rest = await org.rest.get(`/api/programs/${program.id}/executions?limit=${args.executions}&page=${args.page ?? 1}`);
          expect(rest.status).toBe(200);
          expect(program.executions.map(({ audience: _audience, ...execution }: any) => execution)).toEqual(
            rest.body.map((execution: any) => ({
              id: execution.id,
              status: execution.status,
              programId: execution.programId,
              organizationId: execution.organizationId,
              audienceId: execution.audienceId,
              totalContacts: execution.totalContacts,
              contactsPending: execution.contactsPending,
              createdAt: execution.createdAt,
              actualStartAt: execution.actualStartAt,
              autoPauseRules: execution.autoPauseRules,
            })),
          );
        }
      }
    });

    it('holds every execution of the page, with its rules and audience', async () => {
      const read = await org.graphql.ok(LookAheadProgramsDocument, { limit: 10, executions: 10 });
      expect(read.programs.data.map((program) => program.id).sort()).toEqual([...programIds].sort());
      for (const program of read.programs.data) {
        expect(program.executions.map((execution) => execution.status).sort()).toEqual(['cancelled', 'scheduled', 'scheduled']);
        for (const execution of program.executions) {
          expect(execution.programId).toBe(program.id);
          expect(execution.audience!.contactCount).toBe(3);
          expect(execution.autoPauseRules).toHaveLength(1);
          expect(new Date(execution.createdAt).toISOString()).toBe(execution.createdAt);
        }
      }
      const theirs = await other.graphql.ok(LookAheadProgramsDocument, { limit: 10, executions: 10 });
      expect(theirs.programs.data).toEqual([]);
    });

    it('refuses a relation argument out of range as before, on both doors', async () => {
      const graphql = await org.graphql.run(LookAheadProgramsDocument, { limit: 5, executions: 0 });
      expect(graphql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      const rest = await org.rest.get(`/api/programs/${programIds[0]}/executions?limit=0`);
      expect(rest.status).toBe(400);
      expect(rest.body.code).toBe('BAD_USER_INPUT');
    });
  });
});

describe('benchmark-queries', () => {
  // The nested queries of the benchmark resolve their relations in batches: a page of 50 costs the
  // same SQL statements as a page of 5. Counted, not timed.
  let app: TestApp;
  let org: TestOrganization;
  const PROGRAMS = 50;

  beforeAll(async () => {
    app = await startTestApp();
    org = await app.organization('Benchmark shapes');
    const flowId = await createFlow(org);
    const audiences = [await createAudience(org, 2), await createAudience(org, 3)];
    for (let i = 0; i < PROGRAMS; i++) {
      const audienceId = audiences[i % 2]!.id;
      const program = await org.rest.post('/api/programs', { name: `Program ${i}`, kind: 'campaign', flowId, audienceId });
      expect((await org.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
      for (let run = 0; run < 2; run++) expect((await org.rest.post(`/api/programs/${program.body.id}/executions`)).status).toBe(201);

      const agent = await org.rest.post('/api/agents', { name: `Agent ${i}`, instructions: 'Answer briefly.', modelConfig: { model: 'builtin/echo' } });
      expect(agent.status).toBe(201);
      for (let conversation = 0; conversation < 1 + (i % 3); conversation++) {
        expect((await org.rest.post(`/api/agents/${agent.body.id}/conversations`)).status).toBe(201);
      }
    }
  }, 300_000);
  afterAll(() => app.close());

  describe('the benchmark queries', () => {
    it('programs → executions → audience: the same statements for 5 and 50 programs', async () => {
      const run = async (limit: number) => {
        let programs: { executions: { totalContacts: number; audience: { contactCount: number } | null }[] }[] = [];
        const statements = await recordStatements(app, async () => {
          programs = (await org.graphql.ok(BenchmarkProgramsDocument, { limit })).programs.data;
        });
        expect(programs).toHaveLength(limit);
        for (const program of programs) {
          expect(program.executions).toHaveLength(2);
          for (const execution of program.executions) expect(execution.audience!.contactCount).toBe(execution.totalContacts);
        }
        return statements.length;
      };
      const five = await run(5);
      const fifty = await run(50);
      expect(five).toBeGreaterThan(0);
      expect(fifty).toBe(five);
      // the page with its total and each program's executions (read with the page, look-ahead), their audiences;
      // the key lookup is not counted (recordStatements), and the key cache sends it at most once per burst
      expect(five).toBe(2);
    });

    it('agents → conversations(limit: 5): the same statements for 5 and 50 agents', async () => {
      const run = async (limit: number) => {
        let agents: { name: string; conversations: { data: { id: string; status: string }[] } }[] = [];
        const statements = await recordStatements(app, async () => {
          agents = (await org.graphql.ok(BenchmarkAgentsDocument, { limit })).agents.data;
        });
        expect(agents).toHaveLength(limit);
        for (const agent of agents) {
          const index = Number(agent.name.replace('Agent ', ''));
          expect(agent.conversations.data).toHaveLength(1 + (index % 3));
          for (const conversation of agent.conversations.data) expect(conversation.status).toBe('pending');
        }
        return statements.length;
      };
      const five = await run(5);
      const fifty = await run(50);
      expect(five).toBeGreaterThan(0);
      expect(fifty).toBe(five);
      // the page with its total and each agent's conversations (read with the page, look-ahead); the key is not counted
      expect(five).toBe(1);
    });
  });
});
