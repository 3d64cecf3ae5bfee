import { randomBytes } from 'node:crypto';
import {
  CarrierConnectionDocument,
  CarrierConnectionsDocument,
  CreateCarrierConnectionDocument,
  DeleteCarrierConnectionDocument,
  UpdateCarrierConnectionDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { addUser } from '../helpers/users.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';

// Carrier connections on both doors, against a fake Twilio that checks the credentials as Twilio does.

let fake: FakeTwilio;
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
const logs: string[] = [];
const key = randomBytes(32);

beforeAll(async () => {
  fake = await startFakeTwilio();
  app = await startTestApp(
    { logLevel: 'trace', telephony: { twilioApiBaseUrl: fake.url, credentialsKey: key, publicUrl: 'https://gateway.example.test' } },
    { write: (line: string) => void logs.push(line) },
  );
  acme = await app.organization('Acme');
  other = await app.organization('Other');
});
afterAll(async () => {
  await app?.close();
  await fake?.close();
});

const body = (overrides: Record<string, unknown> = {}) => ({ name: 'Twilio main', accountSid: fake.accountSid, authToken: fake.authToken, ...overrides });
/** Every token this test sent, good or bad: none may appear in an answer, a row (in clear) or the log. */
const sentTokens = new Set<string>();
const remember = <T extends { authToken?: unknown }>(input: T): T => {
  if (typeof input.authToken === 'string') sentTokens.add(input.authToken);
  return input;
};
const expectNoToken = (value: unknown) => {
  const text = JSON.stringify(value);
  for (const token of sentTokens) expect(text).not.toContain(token);
  expect(text).not.toMatch(/authTokenEncrypted|auth_token_encrypted/);
};

describe('creating a connection', () => {
  it('REST: the carrier checks the credentials first; the answer shows only the last 4 characters; the row holds the token sealed', async () => {
    const verifiesBefore = fake.requests().length;
    const res = await acme.rest.post('/api/carrier-connections', remember(body({ callsPerSecond: 3 })));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Twilio main', carrier: 'twilio', accountSid: fake.accountSid, authTokenLast4: fake.authToken.slice(-4), callsPerSecond: 3 });
    expectNoToken(res.body);
    const verify = fake.requests().slice(verifiesBefore);
    expect(verify.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /2010-04-01/Accounts/${fake.accountSid}.json`]);
    expect(verify[0]!.headers.authorization).toBe(`Basic ${Buffer.from(`${fake.accountSid}:${fake.authToken}`).toString('base64')}`);
    const [row] = await app.sql<{ auth_token_encrypted: string }>('select auth_token_encrypted from carrier_connections where id = ?', [res.body.id]);
    expect(row!.auth_token_encrypted).toMatch(/^v1:/);
    expect(row!.auth_token_encrypted).not.toContain(fake.authToken);
    // What the runner gets back opens with the key.
    const account = await app.gateway.services.carrierConnections.account(acme.organizationId, res.body.id, app.db.database.em.fork() as never);
    expect(account).toEqual({ connectionId: res.body.id, accountSid: fake.accountSid, authToken: fake.authToken });
  });

  it('GraphQL: the same, in another organization (one account may be connected by several organizations)', async () => {
    const { createCarrierConnection } = await other.graphql.ok(CreateCarrierConnectionDocument, { input: remember(body({ name: 'Other’s Twilio' })) });
    expect(createCarrierConnection).toMatchObject({ accountSid: fake.accountSid, authTokenLast4: fake.authToken.slice(-4), callsPerSecond: 1 });
    expectNoToken(createCarrierConnection);
  });

  it('the same account twice in one organization → 409 on both doors', async () => {
    expect((await acme.rest.post('/api/carrier-connections', body())).body.code).toBe('CONFLICT');
    const gql = await acme.graphql.run(CreateCarrierConnectionDocument, { input: body() });
    expect(gql.errors?.[0]?.extensions.code).toBe('CONFLICT');
  });

  it.each([
    ['accountSid not AC + 32 hex', { accountSid: 'AC123' }, 'accountSid'],
    ['accountSid in capitals', { accountSid: `AC${'A'.repeat(32)}` }, 'accountSid'],
    ['authToken too short', { authToken: 'abc123' }, 'authToken'],
    ['authToken not hex', { authToken: 'z'.repeat(32) }, 'authToken'],
    ['callsPerSecond 0', { callsPerSecond: 0 }, 'callsPerSecond'],
    ['callsPerSecond 101', { callsPerSecond: 101 }, 'callsPerSecond'],
    ['name empty', { name: '' }, 'name'],
  ])('%s → 400 BAD_USER_INPUT naming the field, same on both doors, the carrier never asked', async (_label, change, field) => {
    const before = fake.requests().length;
    const input = remember(body(change));
    const rest = await acme.rest.post('/api/carrier-connections', input);
    expect([rest.status, rest.body.code]).toEqual([400, 'BAD_USER_INPUT']);
    expect(rest.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    const gql = await acme.graphql.run(CreateCarrierConnectionDocument, { input: input as never });
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(gql.errors?.[0]?.extensions.errors?.map((error) => error.field)).toContain(field);
    expect(fake.requests().length).toBe(before);
    expectNoToken([rest.body, gql]);
  });

  it('credentials the carrier rejects (its 401) → 400 saying so on both doors; nothing stored', async () => {
    const fresh = await app.organization('Rejected');
    const input = remember(body({ authToken: randomBytes(16).toString('hex') }));
    const rest = await fresh.rest.post('/api/carrier-connections', input);
    expect([rest.status, rest.body.code]).toEqual([400, 'BAD_USER_INPUT']);
    expect(rest.body.detail).toMatch(/carrier rejected the credentials/);
    const gql = await fresh.graphql.run(CreateCarrierConnectionDocument, { input });
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(gql.errors?.[0]?.message).toMatch(/carrier rejected the credentials/);
    expect((await fresh.rest.get('/api/carrier-connections')).body.meta.total).toBe(0);
    expectNoToken([rest.body, gql]);
  });

  it('a carrier that is down → 503 UNAVAILABLE naming it on both doors; nothing stored', async () => {
    const fresh = await app.organization('Down');
    fake.faults({ unavailable: 503 });
    try {
      const rest = await fresh.rest.post('/api/carrier-connections', body());
      expect([rest.status, rest.body.code]).toEqual([503, 'UNAVAILABLE']);
      expect(rest.body.detail).toMatch(/carrier could not be reached/);
      const gql = await fresh.graphql.run(CreateCarrierConnectionDocument, { input: body() });
      expect(gql.errors?.[0]?.extensions.code).toBe('UNAVAILABLE');
    } finally {
      fake.faults({});
    }
    expect((await fresh.rest.get('/api/carrier-connections')).body.meta.total).toBe(0);
  });

  it('a member may read but not create, change or delete (403 on both doors)', async () => {
    const member = await addUser(app, acme, 'member');
    expect((await member.rest.get('/api/carrier-connections')).status).toBe(200);
    const rest = await member.rest.post('/api/carrier-connections', body({ accountSid: `AC${'b'.repeat(32)}` }));
    expect([rest.status, rest.body.code]).toEqual([403, 'FORBIDDEN']);
    const gql = await member.graphql.run(CreateCarrierConnectionDocument, { input: body({ accountSid: `AC${'b'.repeat(32)}` }) });
    expect(gql.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    const id = (await acme.rest.get('/api/carrier-connections')).body.data[0].id;
    expect((await member.rest.put(`/api/carrier-connections/${id}`, { name: 'x' })).status).toBe(403);
    expect((await member.rest.delete(`/api/carrier-connections/${id}`)).status).toBe(403);
    expect((await member.graphql.run(DeleteCarrierConnectionDocument, { id })).errors?.[0]?.extensions.code).toBe('FORBIDDEN');
  });
});

describe('reading, rotating, deleting', () => {
  let id: string;
  beforeAll(async () => {
    id = (await acme.rest.get('/api/carrier-connections?search=main')).body.data[0].id;
  });

  it('lists and reads on both doors with {data, meta}, never the token', async () => {
    const list = await acme.rest.get('/api/carrier-connections?limit=10&sortBy=name&sortOrder=asc');
    expect(list.status).toBe(200);
    expect(list.body.meta).toMatchObject({ page: 1, limit: 10, total: 1 });
    expect((await acme.rest.get('/api/carrier-connections?sortBy=accountSid')).status).toBe(400);
    const one = await acme.rest.get(`/api/carrier-connections/${id}`);
    const { carrierConnection } = await acme.graphql.ok(CarrierConnectionDocument, { id });
    const { carrierConnections } = await acme.graphql.ok(CarrierConnectionsDocument, { limit: 10 });
    expect(carrierConnection).toEqual(one.body);
    expect(carrierConnections.data).toEqual(list.body.data);
    expectNoToken([list.body, one.body, carrierConnection, carrierConnections]);
  });

  it('rotation: a new token is checked with the carrier, then replaces the old (new last4, new sealed text); a rejected one changes nothing', async () => {
    const [before] = await app.sql<{ auth_token_encrypted: string }>('select auth_token_encrypted from carrier_connections where id = ?', [id]);
    const rejected = await acme.rest.put(`/api/carrier-connections/${id}`, remember({ authToken: randomBytes(16).toString('hex') }));
    expect([rejected.status, rejected.body.code]).toEqual([400, 'BAD_USER_INPUT']);
    const [unchanged] = await app.sql<{ auth_token_encrypted: string }>('select auth_token_encrypted from carrier_connections where id = ?', [id]);
    expect(unchanged).toEqual(before);

    const rotated = randomBytes(16).toString('hex');
    fake.rotate(rotated);
    const res = await acme.rest.put(`/api/carrier-connections/${id}`, remember({ authToken: rotated, name: 'Twilio main (rotated)' }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ authTokenLast4: rotated.slice(-4), name: 'Twilio main (rotated)' });
    const account = await app.gateway.services.carrierConnections.account(acme.organizationId, id, app.db.database.em.fork() as never);
    expect(account.authToken).toBe(rotated);
    const { updateCarrierConnection } = await acme.graphql.ok(UpdateCarrierConnectionDocument, { id, input: { callsPerSecond: 5 } });
    expect(updateCarrierConnection).toMatchObject({ callsPerSecond: 5, authTokenLast4: rotated.slice(-4) });
    const bad = await acme.graphql.run(UpdateCarrierConnectionDocument, { id, input: { callsPerSecond: 101 } });
    expect(bad.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect((await acme.rest.put(`/api/carrier-connections/${id}`, { callsPerSecond: 101 })).body.code).toBe('BAD_USER_INPUT');
    expectNoToken([res.body, updateCarrierConnection]);
  });

  it('another organization gets 404 on every route and field, and changes nothing', async () => {
    expect((await other.rest.get(`/api/carrier-connections/${id}`)).status).toBe(404);
    expect((await other.rest.put(`/api/carrier-connections/${id}`, { name: 'Mine now' })).status).toBe(404);
    expect((await other.rest.delete(`/api/carrier-connections/${id}`)).status).toBe(404);
    for (const result of [
      await other.graphql.run(CarrierConnectionDocument, { id }),
      await other.graphql.run(UpdateCarrierConnectionDocument, { id, input: { name: 'Mine now' } }),
      await other.graphql.run(DeleteCarrierConnectionDocument, { id }),
    ]) {
      expect(result.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    }
    expect((await other.rest.get('/api/carrier-connections')).body.data.map((c: { id: string }) => c.id)).not.toContain(id);
    expect((await acme.rest.get(`/api/carrier-connections/${id}`)).body.name).toBe('Twilio main (rotated)');
  });

  it('DELETE answers 204 with no body; GraphQL deleteCarrierConnection answers {id, message}', async () => {
    const second = await acme.graphql.ok(CreateCarrierConnectionDocument, { input: body({ name: 'Second', accountSid: fake.accountSid }) }).catch(() => null);
    expect(second).toBeNull(); // the same account twice: refused (409) above
    const res = await acme.rest.delete(`/api/carrier-connections/${id}`);
    expect([res.status, res.body]).toEqual([204, undefined]);
    expect((await acme.rest.get(`/api/carrier-connections/${id}`)).status).toBe(404);
    const { createCarrierConnection } = await acme.graphql.ok(CreateCarrierConnectionDocument, { input: body() });
    const { deleteCarrierConnection } = await acme.graphql.ok(DeleteCarrierConnectionDocument, { id: createCarrierConnection.id });
    expect(deleteCarrierConnection.id).toBe(createCarrierConnection.id);
  });
});

describe('without CREDENTIALS_KEY', () => {
  it('creating a connection answers 409 naming CREDENTIALS_KEY on both doors; the carrier is not asked', async () => {
    const bare = await startTestApp({ telephony: { twilioApiBaseUrl: fake.url } });
    try {
      const org = await bare.organization();
      const before = fake.requests().length;
      const rest = await org.rest.post('/api/carrier-connections', body());
      expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
      expect(rest.body.detail).toMatch(/CREDENTIALS_KEY/);
      const gql = await org.graphql.run(CreateCarrierConnectionDocument, { input: body() });
      expect(gql.errors?.[0]?.extensions.code).toBe('CONFLICT');
      expect(gql.errors?.[0]?.message).toMatch(/CREDENTIALS_KEY/);
      expect(fake.requests().length).toBe(before);
    } finally {
      await bare.close();
    }
  });
});

it('no token this test sent ever reached the log (at trace level)', () => {
  expect(logs.length).toBeGreaterThan(0);
  const log = logs.join('');
  for (const token of sentTokens) expect(log).not.toContain(token);
});
