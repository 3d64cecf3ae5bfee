import { randomBytes, randomUUID } from 'node:crypto';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { buildClientSchema, getIntrospectionQuery, getNamedType, isObjectType, parse, type GraphQLSchema, type IntrospectionQuery } from 'graphql';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { flowInput } from '../programs/fixtures.js';

// The lists that moved from em.findAndCount (managed entities) to readPage (unmanaged read objects
// built by one kept statement, src/db/read-model.ts): call flows, carrier connections, API keys,
// users, teams, the credit ledger, do-not-call, business entities and webhook endpoints. For each,
// rows made in two organizations through the doors; the REST page and the GraphQL page (every field
// GraphQL shows without arguments, nested types included) must answer the same rows in the same order
// with the same page meta, for two pages, with nothing of the other organization, and the secrets a
// read object carries (an API key's hash, a carrier's sealed auth token, a webhook endpoint's sealed
// secrets) must appear in neither door's answer.

let app: TestApp;
let fake: FakeTwilio;
let schema: GraphQLSchema;
let acme: TestOrganization;
let other: TestOrganization;
/** Every secret this test sent or was given once: none may be in a list's answer. */
const secrets = new Set<string>();
const SECRET_FIELDS = /keyHash|key_hash|authTokenEncrypted|auth_token_encrypted|secretEncrypted|secret_encrypted|"secret"/;

interface ListCase {
  name: string;
  /** The REST path of the list. */
  rest: string;
  /** The GraphQL query field and the type of its rows. */
  field: string;
  type: string;
  /** API keys: REST answers `{ apiKeys }` with the page in headers, GraphQL a bare list. */
  arrayPage?: true;
  /** The table, and the SQL condition (over the caller's organization id, then its user id) of the rows the caller's list holds. */
  table: string;
  scope?: string;
  /** The list's order in SQL (the default: newest first, ties by id). */
  order?: string;
  /** Makes a few rows in `org` through the doors (at least three: two pages of two). */
  seed(org: TestOrganization, tag: string): Promise<void>;
}

async function created(org: TestOrganization, path: string, body: unknown): Promise<any> {
  const res = await org.rest.post(path, body);
  expect([200, 201]).toContain(res.status);
  return res.body;
}

const CASES: ListCase[] = [
  {
    name: 'call flows',
    rest: '/api/call-flows',
    field: 'callFlows',
    type: 'CallFlow',
    table: 'call_flows',
    async seed(org, tag) {
      for (let i = 0; i < 3; i++) await created(org, '/api/call-flows', { ...flowInput(), name: `${tag} flow ${i}` });
    },
  },
  {
    name: 'carrier connections',
    rest: '/api/carrier-connections',
    field: 'carrierConnections',
    type: 'CarrierConnection',
    table: 'carrier_connections',
    async seed(org, tag) {
      secrets.add(fake.authToken);
      const connection = await created(org, '/api/carrier-connections', { name: `${tag} Twilio`, accountSid: fake.accountSid, authToken: fake.authToken });
      // The fake carrier has one account, so the organization's other connections copy the sealed token of the first under other account ids.
      for (let i = 1; i < 3; i++) {
        await app.sql(
          `insert into carrier_connections (id, created_at, updated_at, organization_id, name, carrier, account_sid, auth_token_encrypted, auth_token_last4, calls_per_second)
           select ?, now(), now(), organization_id, ?, carrier, ?, auth_token_encrypted, auth_token_last4, calls_per_second from carrier_connections where id = ?`,
          [randomUUID(), `${tag} Twilio ${i}`, `AC${randomBytes(16).toString('hex')}`, connection.id],
        );
      }
    },
  },
  {
    name: 'API keys',
    rest: '/api/auth/api-keys',
    field: 'apiKeys',
    type: 'ApiKey',
    arrayPage: true,
    table: 'api_keys',
    scope: 'organization_id = ? and user_id = ?',
    order: 'created_at desc, id desc',
    async seed(org, tag) {
      for (let i = 0; i < 3; i++) secrets.add((await created(org, '/api/auth/api-keys', { name: `${tag} key ${i}`, prefix: 'lst_' })).secret);
    },
  },
  {
    name: 'users',
    rest: '/api/users',
    field: 'users',
    type: 'OrganizationUser',
    table: 'users',
    async seed(org, tag) {
      for (let i = 0; i < 3; i++)
        secrets.add(
          (await created(org, '/api/users', { email: `${tag.toLowerCase()}-${i}@example.test`, name: `${tag} user ${i}`, role: 'member' })).apiKey.secret,
        );
    },
  },
  {
    name: 'teams',
    rest: '/api/teams',
    field: 'teams',
    type: 'Team',
    table: 'teams',
    async seed(org, tag) {
      for (let i = 0; i < 3; i++) {
        const team = await created(org, '/api/teams', { name: `${tag} team ${i}` });
        if (i === 1) await created(org, `/api/teams/${team.id}/members`, { userId: org.userId });
      }
    },
  },
  {
    name: 'the credit ledger',
    rest: '/api/organization/credit-ledger',
    field: 'creditLedger',
    type: 'CreditLedgerEntry',
    table: 'credit_ledger',
    order: 'created_at desc, id desc',
    async seed(org, tag) {
      // Grants are the operator's (the CLI's service); no door writes the ledger.
      for (let i = 0; i < 3; i++) await org.grantCredits(10 + i, `${tag} grant ${i}`);
    },
  },
  {
    name: 'do-not-call',
    rest: '/api/do-not-call',
    field: 'doNotCallEntries',
    type: 'DoNotCallEntry',
    table: 'do_not_call_entries',
    async seed(org, tag) {
      for (let i = 0; i < 3; i++) await created(org, '/api/do-not-call', { phone: `+1415555${tag === 'Acme' ? '01' : '02'}0${i}`, note: `${tag} ${i}` });
    },
  },
  {
    name: 'business entities',
    rest: '/api/business-entities',
    field: 'businessEntities',
    type: 'BusinessEntity',
    table: 'business_entities',
    async seed(org, tag) {
      const contact = await created(org, '/api/contacts', { name: `${tag} contact`, phone: tag === 'Acme' ? '+14155550190' : '+14155550191' });
      for (let i = 0; i < 3; i++) {
        await created(org, '/api/business-entities', {
          contactId: contact.id,
          type: 'appointment',
          name: `${tag} record ${i}`,
          attributes: { at: `2050-01-0${i + 1}`, seats: i },
        });
      }
    },
  },
  {
    name: 'webhook endpoints',
    rest: '/api/webhook-endpoints',
    field: 'webhookEndpoints',
    type: 'WebhookEndpoint',
    table: 'webhook_endpoints',
    async seed(org, tag) {
      for (let i = 0; i < 3; i++) {
        // A public address needs no DNS lookup in a sandbox without network.
        const endpoint = await created(org, '/api/webhook-endpoints', {
          url: `https://93.184.215.14/hooks/${tag}/${i}`,
          eventTypes: ['call.ended'],
          description: `${tag} ${i}`,
        });
        secrets.add(endpoint.secret);
      }
      // One rotated secret, so the previous sealed secret is in a row too.
      const first = (await org.rest.get(`/api/webhook-endpoints?limit=1`)).body.data[0];
      const rotated = await org.rest.post(`/api/webhook-endpoints/${first.id}/rotate-secret`);
      expect([200, 201]).toContain(rotated.status);
      secrets.add(rotated.body.secret);
    },
  },
];

/** The selection of every field of `typeName` GraphQL shows without arguments, nested object types included. */
function selection(typeName: string, depth = 0): string {
  const type = schema.getType(typeName);
  if (!isObjectType(type) || depth > 3) throw new Error(`${typeName} is no object type to select`);
  return Object.values(type.getFields())
    .filter((field) => field.args.length === 0)
    .map((field) => {
      const named = getNamedType(field.type);
      return isObjectType(named) ? `${field.name} { ${selection(named.name, depth + 1)} }` : field.name;
    })
    .join(' ');
}

const META = 'meta { page limit total totalPages hasNextPage hasPreviousPage nextCursor prevCursor lastCursor }';

async function graphqlPage(org: TestOrganization, list: ListCase, page: number): Promise<{ rows: Record<string, unknown>[]; meta?: unknown; text: string }> {
  const query = list.arrayPage
    ? `query { ${list.field}(page: ${page}, limit: 2) { ${selection(list.type)} } }`
    : `query { ${list.field}(page: ${page}, limit: 2) { data { ${selection(list.type)} } ${META} } }`;
  const result = await org.graphql.run(parse(query) as TypedDocumentNode<Record<string, any>, Record<string, never>>);
  expect(result.errors).toBeUndefined();
  const answer = result.data![list.field];
  return list.arrayPage ? { rows: answer, text: JSON.stringify(result) } : { rows: answer.data, meta: answer.meta, text: JSON.stringify(result) };
}

async function restPage(
  org: TestOrganization,
  list: ListCase,
  page: number,
): Promise<{ rows: Record<string, unknown>[]; meta?: unknown; total: number; text: string }> {
  const res = await org.rest.get(`${list.rest}?page=${page}&limit=2`);
  expect(res.status).toBe(200);
  const text = JSON.stringify(res.body);
  if (list.arrayPage) return { rows: res.body.apiKeys, total: Number(res.headers.get('x-total-count')), text };
  return { rows: res.body.data, meta: res.body.meta, total: res.body.meta.total, text };
}

beforeAll(async () => {
  fake = await startFakeTwilio();
  app = await startTestApp({
    telephony: { twilioApiBaseUrl: fake.url, credentialsKey: randomBytes(32), publicUrl: 'https://gateway.example.test' },
    webhooks: { allowPrivate: false, timeoutMs: 1000 },
  });
  acme = await app.organization('Acme');
  other = await app.organization('Other');
  const introspection = await acme.graphql.ok(parse(getIntrospectionQuery()) as TypedDocumentNode<IntrospectionQuery, Record<string, never>>);
  schema = buildClientSchema(introspection);
  for (const list of CASES) {
    await list.seed(acme, 'Acme');
    await list.seed(other, 'Other');
  }
});
afterAll(async () => {
  await app?.close();
  await fake?.close();
});

describe.each(CASES.map((list) => [list.name, list] as const))('%s', (_name, list) => {
  it.each([
    ['Acme', () => acme, () => other],
    ['Other', () => other, () => acme],
  ])('%s: REST and GraphQL answer the same rows, order and meta on two pages, only its own, no secret', async (_org, self, stranger) => {
    const org = self();
    const scope = list.scope ?? 'organization_id = ?';
    const order = list.order ?? 'created_at desc, id asc';
    const own = await app.sql<{ id: string }>(
      `select id from ${list.table} where ${scope} order by ${order}`,
      [org.organizationId, org.userId].slice(0, scope.split('?').length - 1),
    );
    const foreign = new Set(
      (await app.sql<{ id: string }>(`select id from ${list.table} where organization_id = ?`, [stranger().organizationId])).map((row) => row.id),
    );
    expect(own.length).toBeGreaterThanOrEqual(3);
    expect(foreign.size).toBeGreaterThanOrEqual(3);

    const seen: string[] = [];
    for (const page of [1, 2]) {
      const rest = await restPage(org, list, page);
      const graphql = await graphqlPage(org, list, page);
      expect(rest.total).toBe(own.length);
      expect(rest.rows).toHaveLength(page === 1 ? 2 : Math.min(2, own.length - 2));
      if (!list.arrayPage) expect(graphql.meta).toEqual(rest.meta);
      // The same rows in the same order; every field REST shows, as GraphQL shows it (GraphQL may show more: relations REST gives as ids).
      expect(graphql.rows.map((row) => row.id)).toEqual(rest.rows.map((row) => row.id));
      rest.rows.forEach((row, index) => {
        expect(Object.keys(row).length).toBeGreaterThan(3);
        const shown = graphql.rows[index]!;
        expect(Object.fromEntries(Object.keys(row).map((key) => [key, shown[key]]))).toEqual(row);
      });
      for (const row of rest.rows) expect(foreign.has(row.id as string)).toBe(false);
      seen.push(...rest.rows.map((row) => row.id as string));
      for (const text of [rest.text, graphql.text]) {
        expect(text).not.toMatch(SECRET_FIELDS);
        for (const secret of secrets) expect(text).not.toContain(secret);
      }
    }
    // The two pages are the first rows of the organization's own, in the list's order.
    expect(seen).toEqual(own.slice(0, 4).map((row) => row.id));
  });
});

it('no list answer holds a stored secret column (hash or sealed value) of any row', async () => {
  const stored = [
    ...(await app.sql<{ value: string }>('select key_hash as value from api_keys')),
    ...(await app.sql<{ value: string }>('select auth_token_encrypted as value from carrier_connections')),
    ...(await app.sql<{ value: string }>('select secret_encrypted as value from webhook_endpoints')),
    ...(await app.sql<{ value: string }>('select previous_secret_encrypted as value from webhook_endpoints where previous_secret_encrypted is not null')),
  ].map((row) => row.value);
  expect(stored.length).toBeGreaterThanOrEqual(12);
  expect(stored.some((value) => value.startsWith('v1:'))).toBe(true);
  for (const list of CASES) {
    for (const org of [acme, other]) {
      for (const page of [1, 2]) {
        const answers = [(await restPage(org, list, page)).text, (await graphqlPage(org, list, page)).text];
        for (const text of answers) for (const value of stored) expect(text).not.toContain(value);
      }
    }
  }
});
