import { BenchmarkAgentsDocument, BenchmarkProgramsDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { recordStatements } from '../helpers/users.js';
import { createAudience, createFlow } from '../programs/fixtures.js';

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
