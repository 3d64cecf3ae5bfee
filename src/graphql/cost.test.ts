import { buildSchema, GraphQLError, parse, type GraphQLObjectType, type OperationDefinitionNode } from 'graphql';
import { cachedOperationCost, costLimitPlugin, DEFAULT_LIST_SIZE, operationCost, SEARCH_COST, type FieldCost } from './cost.js';

// A small schema with the shapes the gateway's has: a page, unpaged lists, a search, a field declaring its cost.
const schema = buildSchema(`
  type Query {
    agent: Agent
    agents(page: Int = 1, limit: Int = 20): AgentPage
    items: [Item!]
    tags: [Item!]!
    search(topK: Int = 5): [Item!]!
    report: Report
    recent(limit: Int = 3): [Item!]!
    stats: StatsPage
  }
  type StatsPage { data: [Item!]! }
  type AgentPage { data: [Agent!]! meta: PageMeta! }
  type PageMeta { total: Int! }
  type Agent { id: ID! name: String! children: [Agent!]! }
  type Item { id: ID! }
  type Report { data: [Item!]! }
`);
function declare(field: string, cost: FieldCost): void {
  const query = schema.getType('Query') as GraphQLObjectType;
  Object.assign(query.getFields()[field]!, { extensions: { cost } });
}
declare('tags', { size: 3 });
declare('search', { base: SEARCH_COST });

const cost = (query: string, variables?: Record<string, unknown>, operationName?: string) => operationCost(schema, parse(query), variables, operationName);

describe('operationCost: a field is its base plus its selection times the rows it can answer', () => {
  it.each([
    ['a leaf costs 1, an object its base plus its selection', '{ agent { id name } }', 3],
    ['an unpaged list counts its selection 20 times', '{ agent { children { id } } }', 1 + (1 + DEFAULT_LIST_SIZE)],
    ['a nullable list as well', '{ items { id } }', 21],
    ['a list that declares its size counts that many rows', '{ tags { id } }', 4],
    ['a search costs its base plus topK rows', '{ search(topK: 7) { id } }', SEARCH_COST + 7],
    ['a search without topK its default', '{ search { id } }', SEARCH_COST + 5],
    ['a page counts its selection limit times, data once', '{ agents(limit: 5) { data { id name } meta { total } } }', 1 + 5 * (3 + 2)],
    ['a page without limit 20 times', '{ agents { data { id } } }', 1 + 20 * 2],
    ['a list named data outside a page is a list', '{ report { data { id } } }', 1 + (1 + 20)],
    ['introspection and __typename are free', '{ __typename agent { __typename id } }', 2],
    ['a bounded array counts the rows its limit argument asks for', '{ recent(limit: 2) { id } }', 1 + 2],
    ['a page type without a limit argument counts once', '{ stats { data { id } } }', 1 + 2],
    ['fields add up', '{ agent { id } items { id } }', 2 + 21],
  ])('%s', (_what, query, expected) => {
    expect(cost(query)).toBe(expected);
  });

  it('reads limit from the variables, and costs the operation named', () => {
    expect(cost('query Q($n: Int) { agents(limit: $n) { data { id } } }', { n: 3 })).toBe(1 + 3 * 2);
    const two = 'query A { agent { id } } query B { items { id } }';
    expect(cost(two, {}, 'A')).toBe(2);
    expect(cost(two, {}, 'B')).toBe(21);
  });
});

describe('cachedOperationCost: one parsed document asked again', () => {
  it('answers what operationCost answers for each set of variables and each operation name', () => {
    const document = parse('query A($n: Int) { agents(limit: $n) { data { id } } } query B { items { id } }');
    for (const n of [3, 4, 3, 50, 4]) expect(cachedOperationCost(schema, document, { n }, 'A')).toBe(1 + n * 2);
    expect(cachedOperationCost(schema, document, {}, 'B')).toBe(21);
    expect(cachedOperationCost(schema, document, {}, 'A')).toBe(1 + 20 * 2);
  });

  it('keeps answering right past the number of variable sets it keeps, and for variables too long to keep', () => {
    const document = parse('query A($n: Int, $pad: String) { agents(limit: $n) { data { id } } }');
    for (let n = 1; n <= 100; n++) expect(cachedOperationCost(schema, document, { n }, 'A')).toBe(1 + n * 2);
    expect(cachedOperationCost(schema, document, { n: 1 }, 'A')).toBe(3);
    expect(cachedOperationCost(schema, document, { n: 7, pad: 'x'.repeat(5000) }, 'A')).toBe(15);
  });

  it('counts once per document, operation and variables, keeps the last 64 variable sets, and never keeps long variables', () => {
    // A schema whose declared cost changes between asks shows what was kept (the old cost) and what was counted again.
    const changing = buildSchema('type Query { items(n: Int, pad: String): [Item!] other: [Item!] } type Item { id: ID! }');
    const items = (changing.getType('Query') as GraphQLObjectType).getFields()['items']!;
    const sized = (size: number) => Object.assign(items, { extensions: { cost: { size } } });
    const document = parse('query A($n: Int, $pad: String) { items(n: $n, pad: $pad) { id } } query B { items { id } }');
    sized(3);
    expect(cachedOperationCost(changing, document, { n: 0 }, 'A')).toBe(4);
    expect(cachedOperationCost(changing, document, {}, 'B')).toBe(4);
    sized(5);
    expect(cachedOperationCost(changing, document, { n: 0 }, 'A')).toBe(4); // kept
    expect(cachedOperationCost(changing, document, {}, 'B')).toBe(4); // kept under its own name
    expect(cachedOperationCost(changing, document, { n: 1 }, 'A')).toBe(6); // other variables: counted
    expect(cachedOperationCost(changing, parse('query A($n: Int) { items(n: $n) { id } }'), { n: 0 }, 'A')).toBe(6); // another document
    for (let n = 2; n <= 62; n++) cachedOperationCost(changing, document, { n }, 'A'); // 64 kept now: {n:0}, B, {n:1} … {n:62}
    sized(7);
    expect(cachedOperationCost(changing, document, { n: 0 }, 'A')).toBe(4); // still kept
    expect(cachedOperationCost(changing, document, { n: 63 }, 'A')).toBe(8); // the 65th: the oldest ({n:0}) goes
    expect(cachedOperationCost(changing, document, {}, 'B')).toBe(4);
    expect(cachedOperationCost(changing, document, { n: 0 }, 'A')).toBe(8); // counted again
    const long = { n: 1, pad: 'x'.repeat(2100) };
    const atLimit = { n: 1, pad: 'x'.repeat(2048 - 1 - JSON.stringify({ n: 1, pad: '' }).length - 1) };
    expect(cachedOperationCost(changing, document, long, 'A')).toBe(8);
    expect(cachedOperationCost(changing, document, atLimit, 'A')).toBe(8);
    sized(9);
    expect(cachedOperationCost(changing, document, long, 'A')).toBe(10); // too long to keep
    expect(cachedOperationCost(changing, document, atLimit, 'A')).toBe(8); // 2048 characters of key: kept
  });

  it('throws, and keeps nothing, for variables that do not fit the operation', () => {
    const document = parse('query A($n: Int!) { agents(limit: $n) { data { id } } }');
    expect(() => cachedOperationCost(schema, document, {}, 'A')).toThrow();
    expect(() => cachedOperationCost(schema, document, {}, 'A')).toThrow();
    expect(cachedOperationCost(schema, document, { n: 2 }, 'A')).toBe(5);
  });
});

describe('costLimitPlugin', () => {
  async function run(maxCost: number, query: string, variables?: Record<string, unknown>): Promise<unknown> {
    const document = parse(query);
    const operation = document.definitions[0] as OperationDefinitionNode;
    const hooks = await costLimitPlugin(maxCost).requestDidStart!({} as never);
    const resolved = (hooks as { didResolveOperation: (context: unknown) => Promise<void> }).didResolveOperation;
    return resolved({ schema, document, request: { variables }, operation, operationName: operation.name?.value ?? null });
  }
  const page = '{ agents(limit: 5) { data { id name } meta { total } } }'; // costs 26

  it('lets through an operation at the limit', async () => {
    await expect(run(26, page)).resolves.toBeUndefined();
  });

  it('refuses one over it with 400 BAD_USER_INPUT naming its cost and the limit', async () => {
    const refusal = await run(25, page).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(GraphQLError);
    expect((refusal as GraphQLError).extensions).toEqual({ code: 'BAD_USER_INPUT', cost: 26, maxCost: 25, http: { status: 400 } });
    expect((refusal as GraphQLError).message).toBe(
      `The operation would cost 26, over the limit of 25: a list's selection counts once per row it may answer (its limit, 20 by default), a search counts ${SEARCH_COST} more; ask for smaller pages or fewer fields`,
    );
  });

  it('counts the variables of the request', async () => {
    const query = 'query Q($n: Int) { agents(limit: $n) { data { id } } }';
    await expect(run(7, query, { n: 3 })).resolves.toBeUndefined();
    await expect(run(7, query, { n: 4 })).rejects.toMatchObject({ extensions: { code: 'BAD_USER_INPUT', cost: 9 } });
    await expect(run(40, query)).rejects.toMatchObject({ extensions: { cost: 41 } });
  });

  it('costs the operation the request names', async () => {
    const document = parse('query A { agent { id } } query B { agents(limit: 9) { data { id } } }');
    const operation = document.definitions[1] as OperationDefinitionNode;
    const hooks = (await costLimitPlugin(5).requestDidStart!({} as never)) as { didResolveOperation: (context: unknown) => Promise<void> };
    await expect(hooks.didResolveOperation({ schema, document, request: {}, operation, operationName: 'B' })).rejects.toMatchObject({
      extensions: { cost: 19 },
    });
  });

  it('leaves variables that do not fit the operation to execution, which refuses them', async () => {
    await expect(run(1, 'query Q($n: Int!) { agents(limit: $n) { data { id } } }', {})).resolves.toBeUndefined();
  });

  it('lets introspection through whatever the limit', async () => {
    await expect(run(0, '{ __schema { types { name fields { name type { name } } } } }')).resolves.toBeUndefined();
  });
});
