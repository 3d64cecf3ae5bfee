import { AgentsDocument, CreateAgentDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { agentInput } from '../agents/fixtures.js';

// A value of the wrong type is refused by GraphQL's own coercion before the input class's rules run,
// and by class-validator on REST: both doors still answer it with the same message, field and code.

let app: TestApp;
let acme: TestOrganization;
beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(async () => app?.close());

const KNOWLEDGE_BASE = '00000000-0000-4000-8000-000000000000';

/** What each door answered: REST's problem (detail, errors) and GraphQL's first error (message, code, errors). */
async function bothDoors(input: Record<string, unknown>) {
  const rest = await acme.rest.post('/api/agents', input);
  expect(rest.status).toBe(400);
  const graphql = await acme.graphql.run(CreateAgentDocument, { input } as never);
  const [error] = graphql.errors ?? [];
  return {
    rest: { message: rest.body.detail, code: rest.body.code, errors: rest.body.errors },
    graphql: { message: error?.message, code: error?.extensions.code, errors: error?.extensions.errors },
  };
}

describe('a value of the wrong type, on both doors', () => {
  it.each([
    ['a number for a String', { name: 5 }, { field: 'name', message: 'name must be a string' }],
    [
      'a string for an Int, nested',
      { knowledgeBaseConfig: { knowledgeBaseId: KNOWLEDGE_BASE, topK: 'x' } },
      { field: 'knowledgeBaseConfig.topK', message: 'topK must be an integer number' },
    ],
    [
      'a fraction for an Int',
      { memoryConfig: { enabled: true, lastMessages: 2.5 } },
      { field: 'memoryConfig.lastMessages', message: 'lastMessages must be an integer number' },
    ],
    [
      'a string for a Float',
      { knowledgeBaseConfig: { knowledgeBaseId: KNOWLEDGE_BASE, similarityThreshold: 'x' } },
      { field: 'knowledgeBaseConfig.similarityThreshold', message: 'similarityThreshold must be a number conforming to the specified constraints' },
    ],
    ['a string for a Boolean', { memoryConfig: { enabled: 'yes' } }, { field: 'memoryConfig.enabled', message: 'enabled must be a boolean value' }],
    [
      'a value outside an enum',
      { firstMessageMode: 'bogus' },
      { field: 'firstMessageMode', message: 'firstMessageMode must be one of the following values: agent_speaks_first, wait_for_caller' },
    ],
    ['a number in a list of inputs', { variables: [{ name: 5 }] }, { field: 'variables.0.name', message: 'name must be a string' }],
    [
      'a number in a list of strings',
      { mcpTools: [{ serverId: KNOWLEDGE_BASE, names: ['lookup', 7] }] },
      { field: 'mcpTools.0.names', message: 'each value in names must be a string' },
    ],
  ])('%s: the same message, field and code', async (_what, bad, expected) => {
    const { rest, graphql } = await bothDoors(agentInput(bad));
    expect(rest).toEqual({ message: expected.message, code: 'BAD_USER_INPUT', errors: [expected] });
    expect(graphql).toEqual(rest);
  });

  it('a query argument of the wrong type: the same on both doors', async () => {
    const rest = await acme.rest.get('/api/agents?limit=ten');
    expect(rest.status).toBe(400);
    const graphql = await acme.graphql.run(AgentsDocument, { limit: 'ten' } as never);
    const [error] = graphql.errors ?? [];
    expect({ message: error?.message, code: error?.extensions.code, errors: error?.extensions.errors }).toEqual({
      message: rest.body.detail,
      code: rest.body.code,
      errors: rest.body.errors,
    });
  });

  it('a literal of the wrong type in the document says what REST says of the value', async () => {
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
      body: JSON.stringify({ query: 'mutation { createAgent(input: {name: 5, instructions: "x", modelConfig: {model: "builtin/echo"}}) { id } }' }),
    });
    const [error] = ((await res.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] }).errors;
    expect(error).toMatchObject({
      message: 'name must be a string',
      extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'name', message: 'name must be a string' }] },
    });
  });
});
