import { randomUUID } from 'node:crypto';
import { getMetadataStorage } from 'class-validator';
import type { TestApp, TestOrganization } from '../helpers/app.js';

/** Real records of one organization, by the resource a path or argument names. */
export interface Seeded {
  agent: string;
  conversation: string;
  knowledgeBase: string;
  document: string;
  contact: string;
  audience: string;
  businessEntity: string;
  callFlow: string;
  program: string;
  execution: string;
  apiKey: string;
  team: string;
  user: string;
  call: string;
  carrierConnection: string;
  phoneNumber: string;
  event: string;
  webhookEndpoint: string;
  /** A number on the organization's do-not-call list (its routes name an entry by id or by number). */
  doNotCall: string;
  contactImport: string;
  tool: string;
  mcpServer: string;
}

export type Resource = keyof Seeded;

let serial = 0;

async function created(org: TestOrganization, path: string, body?: unknown): Promise<string> {
  const res = await org.rest.post(path, body);
  if (res.status !== 201) throw new Error(`seeding POST ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** One of each record through the REST door: the ids the fuzzers aim at. */
export async function seed(org: TestOrganization, app?: TestApp): Promise<Seeded> {
  const n = ++serial;
  const knowledgeBase = await created(org, '/api/knowledge-bases', { name: `KB ${n}` });
  const document = await created(org, `/api/knowledge-bases/${knowledgeBase}/documents`, { title: 'Hours', content: 'We open at nine.' });
  const agent = await created(org, '/api/agents', {
    name: `Agent ${n}`,
    instructions: 'Be brief.',
    modelConfig: { model: 'builtin/echo' },
    knowledgeBaseConfig: { knowledgeBaseId: knowledgeBase },
  });
  const activatedAgent = await org.rest.post(`/api/agents/${agent}/activate`);
  if (activatedAgent.status !== 200) throw new Error(`seeding agent activate answered ${activatedAgent.status}`);
  const conversation = await created(org, `/api/agents/${agent}/conversations`);
  const contact = await created(org, '/api/contacts', { name: `Person ${n}`, phone: `+1415555${String(1000 + n).padStart(4, '0')}` });
  const audience = await created(org, '/api/audience', { name: `Audience ${n}` });
  const members = await org.rest.post(`/api/audience/${audience}/members`, { contactIds: [contact] });
  if (members.status !== 200) throw new Error(`seeding members answered ${members.status}`);
  const businessEntity = await created(org, '/api/business-entities', { contactId: contact, type: 'order', name: `Order ${n}` });
  const callFlow = await created(org, '/api/call-flows', {
    name: `Flow ${n}`,
    nodes: [
      { id: 'start', type: 'start', agentId: agent },
      { id: 'done', type: 'end' },
    ],
    edges: [{ from: 'start', to: 'done' }],
  });
  const program = await created(org, '/api/programs', { name: `Program ${n}`, kind: 'campaign', flowId: callFlow, audienceId: audience });
  const activated = await org.rest.post(`/api/programs/${program}/activate`);
  if (activated.status !== 200) throw new Error(`seeding activate answered ${activated.status}`);
  const execution = await created(org, `/api/programs/${program}/executions`);
  const apiKey = await created(org, '/api/auth/api-keys', { name: `Key ${n}`, prefix: 'fz_' });
  const team = await created(org, '/api/teams', { name: `Team ${n}` });
  // Calls are written by the runner, not through a door: one row as it would write it.
  const call = randomUUID();
  if (app) {
    await app.sql(
      `insert into calls (id, created_at, updated_at, organization_id, execution_id, program_id, contact_id, direction, to_number, status, attempt, carrier, queued_at, reached_node_ids, credits_charged)
       values (?, now(), now(), ?, ?, ?, ?, 'outbound', '+14155550199', 'completed', 1, 'simulator', now(), '[]'::jsonb, 0)`,
      [call, org.organizationId, execution, program, contact],
    );
    // Its recording, kept as the simulated carrier keeps one (a few bytes stand for the audio).
    await app.sql(
      `insert into call_recordings (id, created_at, updated_at, organization_id, call_id, carrier, carrier_recording_id, status, channels, duration_seconds, audio)
       values (?, now(), now(), ?, ?, 'simulator', ?, 'completed', 'mono', 1, ?)`,
      [randomUUID(), org.organizationId, call, `SR${randomUUID().replaceAll('-', '')}`, Buffer.from('RIFF')],
    );
  }
  // A connection is checked with the carrier when made through the door: one row as it would be stored (its token never opened here).
  const carrierConnection = randomUUID();
  if (app) {
    await app.sql(
      `insert into carrier_connections (id, created_at, updated_at, organization_id, name, carrier, account_sid, auth_token_encrypted, auth_token_last4, calls_per_second)
       values (?, now(), now(), ?, ?, 'twilio', ?, 'v1:AAAA:AAAA:AAAA', 'abcd', 1)`,
      [carrierConnection, org.organizationId, `Twilio ${n}`, `AC${randomUUID().replaceAll('-', '')}`],
    );
  }
  const phoneNumber = await created(org, '/api/phone-numbers', {
    number: `+1628555${String(1000 + n).padStart(4, '0')}`,
    ...(app ? { carrierConnectionId: carrierConnection } : {}),
  });
  // Events are written by the changes themselves: one row as the outbox would hold it.
  const event = randomUUID();
  if (app) {
    await app.sql(`insert into events (id, organization_id, type, created_at, payload) values (?, ?, 'agent.activated', now(), ?::jsonb)`, [
      event,
      org.organizationId,
      JSON.stringify({ id: agent }),
    ]);
  }
  // An endpoint is checked (URL, CREDENTIALS_KEY) when made through the door: one row as it would be stored.
  const webhookEndpoint = randomUUID();
  if (app) {
    await app.sql(
      `insert into webhook_endpoints (id, created_at, updated_at, organization_id, url, event_types, enabled, secret_encrypted, secret_hint)
       values (?, now(), now(), ?, 'https://93.184.215.14/hooks', '[]'::jsonb, true, 'v1:AAAA:AAAA:AAAA', 'abcd')`,
      [webhookEndpoint, org.organizationId],
    );
  }
  const doNotCall = `+1646555${String(1000 + n).padStart(4, '0')}`;
  const listed = await org.rest.post('/api/do-not-call', { phone: doNotCall });
  if (listed.status !== 201) throw new Error(`seeding the do-not-call list answered ${listed.status}`);
  // An import awaiting its file, as GraphQL createContactImport makes one (REST sends the CSV at once).
  const made = await fetch(org.graphql.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': org.apiKey },
    body: JSON.stringify({ query: 'mutation { createContactImport { id } }' }),
  });
  const contactImport = ((await made.json()) as { data?: { createContactImport?: { id: string } } }).data?.createContactImport?.id;
  if (!contactImport) throw new Error('seeding createContactImport answered no id');
  // A tool is sealed under CREDENTIALS_KEY when made through the door: one row as it would be stored (its secret never opened here).
  const tool = randomUUID();
  // An MCP server is listed when made through the door: one row as a listing leaves it, ready, at an address never called.
  const mcpServer = randomUUID();
  if (app) {
    await app.sql(
      `insert into tools (id, created_at, updated_at, organization_id, name, description, parameters, url, secret_encrypted, secret_hint)
       values (?, now(), now(), ?, ?, 'Look up an order', '{"type":"object"}'::jsonb, 'https://93.184.215.14/tools/lookup', 'v1:AAAA:AAAA:AAAA', 'abcd')`,
      [tool, org.organizationId, `lookup_${n}`],
    );
    await app.sql(
      `insert into mcp_servers (id, created_at, updated_at, organization_id, name, url, status, tools, refreshed_at)
       values (?, now(), now(), ?, ?, 'https://93.184.215.14/mcp', 'ready', ?::jsonb, now())`,
      [mcpServer, org.organizationId, `MCP ${n}`, JSON.stringify([])],
    );
  }
  return {
    contactImport,
    tool,
    mcpServer,
    agent,
    conversation,
    knowledgeBase,
    document,
    contact,
    audience,
    businessEntity,
    callFlow,
    program,
    execution,
    apiKey,
    team,
    user: org.userId,
    call,
    carrierConnection,
    phoneNumber,
    event,
    webhookEndpoint,
    doNotCall,
  };
}

const SEGMENT_RESOURCE: Record<string, Resource> = {
  agents: 'agent',
  conversations: 'conversation',
  'api-keys': 'apiKey',
  'business-entities': 'businessEntity',
  audience: 'audience',
  contacts: 'contact',
  'knowledge-bases': 'knowledgeBase',
  teams: 'team',
  'call-flows': 'callFlow',
  programs: 'program',
  executions: 'execution',
  users: 'user',
  calls: 'call',
  'carrier-connections': 'carrierConnection',
  'phone-numbers': 'phoneNumber',
  events: 'event',
  'webhook-endpoints': 'webhookEndpoint',
  'do-not-call': 'doNotCall',
  imports: 'contactImport',
  tools: 'tool',
  'mcp-servers': 'mcpServer',
};

const PARAM_RESOURCE: Record<string, Resource> = {
  agentId: 'agent',
  knowledgeBaseId: 'knowledgeBase',
  documentId: 'document',
  conversationId: 'conversation',
  programId: 'program',
  audienceId: 'audience',
  teamId: 'team',
  userId: 'user',
  endpointId: 'webhookEndpoint',
};

/** The resource a path parameter names: by its own name, or for `{id}` by the segment before it. */
export function resourceOfParam(path: string, param: string): Resource {
  if (PARAM_RESOURCE[param]) return PARAM_RESOURCE[param];
  const segments = path.split('/');
  const segment = segments[segments.indexOf(`{${param}}`) - 1];
  const resource = SEGMENT_RESOURCE[segment];
  if (!resource) throw new Error(`no resource known for {${param}} in ${path}: add it to the fuzz fixtures`);
  return resource;
}

export const paramsOf = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);

/** The property names class-validator knows on an input class (its whitelist). */
export function fieldsOfClass(type: (new () => object) | undefined): string[] {
  if (!type) return [];
  const metadata = getMetadataStorage().getTargetValidationMetadatas(type, '', true, false);
  return [...new Set(metadata.map((entry) => entry.propertyName))];
}

let tables: string[] | undefined;

/** Rows per table of the app's schema: equal before and after a request means it wrote no row. */
export async function rowCounts(app: TestApp): Promise<Record<string, number>> {
  tables ??= (
    await app.sql<{ name: string }>(
      `select table_name as name from information_schema.tables
       where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name not like 'mikro_orm%' order by 1`,
    )
  ).map((row) => row.name);
  const [row] = await app.sql<Record<string, string>>(`select ${tables.map((table) => `(select count(*) from "${table}") as "${table}"`).join(', ')}`);
  return Object.fromEntries(Object.entries(row).map(([table, count]) => [table, Number(count)]));
}
