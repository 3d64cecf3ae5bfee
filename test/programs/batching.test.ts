import { ProgramsWithExecutionsDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAudience, createFlow } from './fixtures.js';

let app: TestApp;
let statements: string[] | null = null;

beforeAll(async () => {
  app = await startTestApp();
  // Every SQL statement MikroORM sends goes through the driver connection's executeQuery.
  const connection = app.db.database.orm.em.getConnection() as unknown as {
    executeQuery: (query: string, ...rest: unknown[]) => Promise<unknown>;
  };
  const original = connection.executeQuery.bind(connection);
  connection.executeQuery = (query, ...rest) => {
    statements?.push(query);
    return original(query, ...rest);
  };
});
afterAll(() => app.close());

/** An organization with `count` active campaigns, each with two executions over a 2-contact audience. */
async function organizationWith(count: number): Promise<TestOrganization> {
  const org = await app.organization(`Org with ${count}`);
  const flowId = await createFlow(org);
  const audienceId = (await createAudience(org, 2)).id;
  for (let i = 0; i < count; i++) {
    const program = await org.rest.post('/api/programs', { name: `Program ${i}`, kind: 'campaign', flowId, audienceId });
    await org.rest.post(`/api/programs/${program.body.id}/activate`);
    for (let run = 0; run < 2; run++) expect((await org.rest.post(`/api/programs/${program.body.id}/executions`)).status).toBe(201);
  }
  return org;
}

async function countStatements(org: TestOrganization): Promise<{ count: number; programs: number }> {
  statements = [];
  const { programs } = await org.graphql.ok(ProgramsWithExecutionsDocument, { limit: 100, executions: 2 });
  const count = statements.length;
  statements = null;
  for (const program of programs.data) {
    expect(program.executions).toHaveLength(2);
    for (const execution of program.executions) {
      expect(execution).toMatchObject({ status: 'scheduled', totalContacts: 2, audience: { contactCount: 2 }, program: { id: program.id } });
    }
  }
  return { count, programs: programs.data.length };
}

describe('nested program → executions → audience queries', () => {
  it('cost the same number of SQL statements for 5 and 50 programs', async () => {
    const five = await countStatements(await organizationWith(5));
    const fifty = await countStatements(await organizationWith(50));
    expect(five.programs).toBe(5);
    expect(fifty.programs).toBe(50);
    expect(five.count).toBeGreaterThan(0);
    expect(fifty.count).toBe(five.count);
    // authentication, the page and its count, executions, audiences, programs: a handful, not one per row
    expect(fifty.count).toBeLessThanOrEqual(8);
  }, 120_000);
});
