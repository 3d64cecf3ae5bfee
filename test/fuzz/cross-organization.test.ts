import { getNamedType, isEnumType, isInputObjectType, isLeafType, isListType, isNonNullType, type GraphQLField, type GraphQLInputType } from 'graphql';
import { REST_ROUTES } from '../../src/doors.js';
import { gatewaySchema } from '../../src/doors.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { paramsOf, resourceOfParam, rowCounts, seed, type Resource, type Seeded } from './fixtures.js';

// Exhaustive, not random: every REST route and every GraphQL field that takes an id, called by
// organization B with organization A's real ids, answers 404 / NOT_FOUND and changes nothing.

let app: TestApp;
let intruder: TestOrganization;
let victim: Seeded;
let mine: Seeded;

const schema = await gatewaySchema();

beforeAll(async () => {
  app = await startTestApp();
  victim = await seed(await app.organization('Victim'), app);
  intruder = await app.organization('Intruder');
  mine = await seed(intruder, app);
});
afterAll(() => app?.close());

/** Valid bodies, so that the request gets past validation to the lookup that must fail. */
const BODIES: Record<string, () => unknown> = {
  testAgent: () => ({ message: 'hello' }),
  sendMessage: () => ({ message: 'hello' }),
  addAudienceMembers: () => ({ contactIds: [victim.contact] }),
  removeAudienceMembers: () => ({ contactIds: [victim.contact] }),
  addDocument: () => ({ title: 'Hours', content: 'We open at nine.' }),
  addTeamMember: () => ({ userId: victim.user }),
  updateUserRole: () => ({ role: 'member' }),
  createWebhookDelivery: () => ({ eventId: mine.event }),
};

/** A route that reads a raw body (a CSV upload) is sent a valid one in its media type, so that only the id can fail. */
async function sendRaw(method: string, path: string, rawBody: { mediaType: string; example: string }) {
  const res = await fetch(`${app.baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': intruder.apiKey, 'content-type': rawBody.mediaType },
    body: rawBody.example,
  });
  return { status: res.status, body: (await res.json()) as { code?: string } };
}

const routesWithIds = REST_ROUTES.filter((route) => paramsOf(route.path).length > 0);

it.each(routesWithIds.map((route) => [`${route.method.toUpperCase()} ${route.path}`, route] as const))(
  'REST %s with the other organization’s ids → 404',
  async (_label, route) => {
    const path = paramsOf(route.path).reduce((text, param) => text.replace(`{${param}}`, victim[resourceOfParam(route.path, param)]), `/api${route.path}`);
    const body = route.body ? (BODIES[route.operationId]?.() ?? {}) : undefined;
    const before = await rowCounts(app);
    const res = route.rawBody
      ? await sendRaw(route.method.toUpperCase(), path, route.rawBody)
      : await intruder.rest.request(route.method.toUpperCase(), path, body);
    expect([res.status, res.body?.code]).toEqual([404, 'NOT_FOUND']);
    expect(await rowCounts(app)).toEqual(before);
  },
);

it.each([
  ['audience members', () => ['POST', `/api/audience/${mine.audience}/members`, { contactIds: [victim.contact] }]],
  ['a business record’s contact', () => ['POST', '/api/business-entities', { contactId: victim.contact, type: 'order', name: 'Stolen' }]],
  ['a team member', () => ['POST', `/api/teams/${mine.team}/members`, { userId: victim.user }]],
  [
    'an agent’s knowledge base',
    () => [
      'POST',
      '/api/agents',
      { name: 'A', instructions: 'I', modelConfig: { model: 'builtin/echo' }, knowledgeBaseConfig: { knowledgeBaseId: victim.knowledgeBase } },
    ],
  ],
  ['a program’s flow', () => ['POST', '/api/programs', { name: 'P', kind: 'campaign', flowId: victim.callFlow, audienceId: mine.audience }]],
  ['a program’s audience', () => ['POST', '/api/programs', { name: 'P', kind: 'campaign', flowId: mine.callFlow, audienceId: victim.audience }]],
  ['an event re-sent to one’s own webhook endpoint', () => ['POST', `/api/webhook-endpoints/${mine.webhookEndpoint}/deliveries`, { eventId: victim.event }]],
] as [string, () => [string, string, unknown]][])('REST: an id of the other organization inside a body (%s) → 404', async (_label, request) => {
  const [method, path, body] = request();
  const before = await rowCounts(app);
  const res = await intruder.rest.request(method, path, body);
  expect([res.status, res.body?.code]).toEqual([404, 'NOT_FOUND']);
  expect(await rowCounts(app)).toEqual(before);
});

const ARG_RESOURCE: Record<string, Resource> = {
  agentId: 'agent',
  conversationId: 'conversation',
  knowledgeBaseId: 'knowledgeBase',
  documentId: 'document',
  programId: 'program',
  teamId: 'team',
  audienceId: 'audience',
  userId: 'user',
  contactId: 'contact',
  contactIds: 'contact',
  carrierConnectionId: 'carrierConnection',
  fromNumberId: 'phoneNumber',
  endpointId: 'webhookEndpoint',
  callId: 'call',
};
// Order matters: the first name found in the field's name decides what its `id` is.
const FIELD_RESOURCE: [string, Resource][] = [
  ['donotcall', 'doNotCall'],
  ['contactimport', 'contactImport'],
  ['mcpserver', 'mcpServer'],
  ['tool', 'tool'],
  ['webhookendpoint', 'webhookEndpoint'],
  ['event', 'event'],
  ['apikey', 'apiKey'],
  ['businessentit', 'businessEntity'],
  ['callflow', 'callFlow'],
  ['carrierconnection', 'carrierConnection'],
  ['phonenumber', 'phoneNumber'],
  ['call', 'call'],
  ['knowledgebase', 'knowledgeBase'],
  ['conversation', 'conversation'],
  ['execution', 'execution'],
  ['audience', 'audience'],
  ['contact', 'contact'],
  ['program', 'program'],
  ['team', 'team'],
  ['user', 'user'],
  ['agent', 'agent'],
];

function resourceOfArg(field: string, arg: string): Resource {
  const resource = arg === 'id' ? FIELD_RESOURCE.find(([name]) => field.toLowerCase().includes(name))?.[1] : ARG_RESOURCE[arg];
  if (!resource) throw new Error(`no resource known for ${field}(${arg}): add it to cross-organization.test.ts`);
  return resource;
}

const isId = (type: GraphQLInputType) => getNamedType(type).name === 'ID';

/** The smallest valid value of a required argument that is not an id. */
function minimal(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return minimal(type.ofType);
  if (isListType(type)) return [minimal(type.ofType)];
  if (isEnumType(type)) return type.getValues()[0]!.value;
  if (isInputObjectType(type)) {
    const required = Object.values(type.getFields()).filter((field) => isNonNullType(field.type) && field.defaultValue === undefined);
    return Object.fromEntries(required.map((field) => [field.name, minimal(field.type)]));
  }
  // An id inside an input (a re-sent event's eventId): a UUID no organization has.
  return { String: 'hello', Int: 1, Float: 0.5, Boolean: true, ID: '00000000-0000-4000-8000-000000000000' }[getNamedType(type).name] ?? {};
}

const fieldsWithIds = (['query', 'mutation'] as const).flatMap((kind) => {
  const root = kind === 'query' ? schema.getQueryType()! : schema.getMutationType()!;
  return Object.values(root.getFields())
    .filter((field) => field.args.some((arg) => isId(arg.type) && isNonNullType(arg.type)))
    .map((field) => [`${kind} ${field.name}`, kind, field] as const);
});

function operation(kind: string, field: GraphQLField<unknown, unknown>) {
  const args = field.args.filter((arg) => isNonNullType(arg.type) && arg.defaultValue === undefined);
  const declared = args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
  const passed = args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  const selection = isLeafType(getNamedType(field.type)) ? '' : ' { __typename }';
  const variables = Object.fromEntries(
    args.map((arg) => {
      if (!isId(arg.type)) return [arg.name, minimal(arg.type)];
      const id = victim[resourceOfArg(field.name, arg.name)];
      return [arg.name, isListType(isNonNullType(arg.type) ? arg.type.ofType : arg.type) ? [id] : id];
    }),
  );
  return { query: `${kind} Intrude(${declared}) { ${field.name}(${passed})${selection} }`, variables };
}

it.each(fieldsWithIds)('GraphQL %s with the other organization’s ids → NOT_FOUND', async (_label, kind, field) => {
  const before = await rowCounts(app);
  const res = await fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': intruder.apiKey },
    body: JSON.stringify(operation(kind, field)),
  });
  const body = (await res.json()) as { data?: unknown; errors?: { extensions: { code: string } }[] };
  expect(body.errors?.map((error) => error.extensions.code)).toEqual(['NOT_FOUND']);
  expect(await rowCounts(app)).toEqual(before);
});

it('covers every id-taking field of both doors', () => {
  expect(routesWithIds.length).toBeGreaterThan(30);
  expect(fieldsWithIds.length).toBeGreaterThan(40);
});
