import { randomBytes } from 'node:crypto';
import { get as httpGet } from 'node:http';
import {
  ActivateCarrierProgramDocument,
  CallsDocument,
  type CallsQueryVariables,
  CallWithRelationsDocument,
  CarrierConnectionDocument,
  CarrierConnectionsDocument,
  CarrierProgramsDocument,
  ContactsWithCallsDocument,
  CreateCarrierConnectionDocument,
  CreateCarrierProgramDocument,
  CreatePhoneNumberDocument,
  DeleteCarrierConnectionDocument,
  DeletePhoneNumberDocument,
  ExecutionCallsDocument,
  PhoneNumberDocument,
  PhoneNumbersDocument,
  UpdateCarrierConnectionDocument,
  UpdateCarrierProgramDocument,
  UpdatePhoneNumberDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { addUser, recordStatements } from '../helpers/users.js';
import { type FakeTwilio, startFakeTwilio } from '../support/fake-twilio.js';
import { createAudience, createFlow } from '../programs/fixtures.js';
import { type Campaign, campaignWithExecution, insertCall } from './call-seed.js';
import { createLogger } from '../../src/common/logger.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { FLOW, waitForExecution } from './fixtures.js';
import { testRunner } from '../runner/fixtures.js';
import { withCursors } from '../helpers/pages.js';

// Telephony: carrier connections, phone numbers and programs, reading calls, the calls CSV and a simulated
// campaign, one describe each (they were one file each), each on its own app(s) and database(s).
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('carrier-connections', () => {
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
      expect(res.body).toMatchObject({
        name: 'Twilio main',
        carrier: 'twilio',
        accountSid: fake.accountSid,
        authTokenLast4: fake.authToken.slice(-4),
        callsPerSecond: 3,
      });
      expectNoToken(res.body);
      const verify = fake.requests().slice(verifiesBefore);
      expect(verify.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /2010-04-01/Accounts/${fake.accountSid}.json`]);
      expect(verify[0]!.headers.authorization).toBe(`Basic ${Buffer.from(`${fake.accountSid}:${fake.authToken}`).toString('base64')}`);
      const [row] = await app.sql<{ auth_token_encrypted: string }>('select auth_token_encrypted from carrier_connections where id = ?', [res.body.id]);
      expect(row!.auth_token_encrypted).toMatch(/^v1:/);
      expect(row!.auth_token_encrypted).not.toContain(fake.authToken);
      // What the runner gets back opens with the key.
      const account = await app.gateway.services.carrierConnections.account(acme.organizationId, res.body.id, app.db.database.em.fork() as never);
      expect(account).toEqual({ connectionId: res.body.id, kind: 'twilio', accountSid: fake.accountSid, authToken: fake.authToken, webhookKey: null });
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

      // A Webhooks Rule's SharedKey secret: write-only like the token, its last 4 shown, removed with null; the same rules on both doors.
      const sharedKey = `sk_${randomBytes(16).toString('hex')}`;
      const keyed = await acme.rest.put(`/api/carrier-connections/${id}`, { webhookKey: sharedKey });
      expect(keyed.body).toMatchObject({ webhookKeyLast4: sharedKey.slice(-4) });
      expect(JSON.stringify(keyed.body)).not.toContain(sharedKey);
      expect((await app.gateway.services.carrierConnections.account(acme.organizationId, id, app.db.database.em.fork() as never)).webhookKey).toBe(sharedKey);
      const short = await acme.graphql.run(UpdateCarrierConnectionDocument, { id, input: { webhookKey: 'short' } });
      expect(short.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect((await acme.rest.put(`/api/carrier-connections/${id}`, { webhookKey: 'short' })).body.code).toBe('BAD_USER_INPUT');
      const { updateCarrierConnection: removed } = await acme.graphql.ok(UpdateCarrierConnectionDocument, { id, input: { webhookKey: null } });
      expect(removed.webhookKeyLast4).toBeNull();
      expect((await app.gateway.services.carrierConnections.account(acme.organizationId, id, app.db.database.em.fork() as never)).webhookKey).toBeNull();
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
});

describe('phone-numbers-and-programs', () => {
  let fake: FakeTwilio;
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;
  let connection: string;
  let otherConnection: string;

  beforeAll(async () => {
    fake = await startFakeTwilio();
    app = await startTestApp({ telephony: { twilioApiBaseUrl: fake.url, credentialsKey: randomBytes(32), publicUrl: 'https://gateway.example.test' } });
    acme = await app.organization('Acme');
    other = await app.organization('Other');
    const connect = async (org: TestOrganization) => {
      const res = await org.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: fake.accountSid, authToken: fake.authToken });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    connection = await connect(acme);
    otherConnection = await connect(other);
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  describe('phone numbers', () => {
    it('REST and GraphQL create E.164 numbers, showing the connection inline (never its token)', async () => {
      const rest = await acme.rest.post('/api/phone-numbers', { number: '+14155550100', label: 'Main line', carrierConnectionId: connection });
      expect(rest.status).toBe(201);
      expect(rest.body).toMatchObject({
        number: '+14155550100',
        label: 'Main line',
        carrierConnectionId: connection,
        carrierConnection: { id: connection, authTokenLast4: fake.authToken.slice(-4) },
      });
      const { createPhoneNumber } = await acme.graphql.ok(CreatePhoneNumberDocument, { input: { number: '+442071838750' } });
      expect(createPhoneNumber).toMatchObject({ number: '+442071838750', label: null, carrierConnectionId: null, carrierConnection: null });
      const { phoneNumber } = await acme.graphql.ok(PhoneNumberDocument, { id: rest.body.id });
      expect(phoneNumber).toEqual(rest.body);
      expect(JSON.stringify([rest.body, phoneNumber])).not.toContain(fake.authToken);
    });

    it.each([['4155550100'], ['+04155550100'], ['+1415555010012345'], ['+1 415 555 0100'], ['+1']])(
      'number %j → 400 BAD_USER_INPUT naming number, same on both doors',
      async (number) => {
        const rest = await acme.rest.post('/api/phone-numbers', { number });
        expect([rest.status, rest.body.code, rest.body.errors?.[0]?.field]).toEqual([400, 'BAD_USER_INPUT', 'number']);
        const gql = await acme.graphql.run(CreatePhoneNumberDocument, { input: { number } });
        expect([gql.errors?.[0]?.extensions.code, gql.errors?.[0]?.extensions.errors?.[0]?.field]).toEqual(['BAD_USER_INPUT', 'number']);
      },
    );

    it('a number already in the organization → 409 on both doors; another organization may hold it', async () => {
      expect((await acme.rest.post('/api/phone-numbers', { number: '+14155550100' })).body.code).toBe('CONFLICT');
      expect((await acme.graphql.run(CreatePhoneNumberDocument, { input: { number: '+14155550100' } })).errors?.[0]?.extensions.code).toBe('CONFLICT');
      expect((await other.rest.post('/api/phone-numbers', { number: '+14155550100', carrierConnectionId: otherConnection })).status).toBe(201);
    });

    it('a carrierConnectionId of another organization → 404 on both doors, nothing stored', async () => {
      const rest = await acme.rest.post('/api/phone-numbers', { number: '+14155550177', carrierConnectionId: otherConnection });
      expect([rest.status, rest.body.code]).toEqual([404, 'NOT_FOUND']);
      const gql = await acme.graphql.run(CreatePhoneNumberDocument, { input: { number: '+14155550177', carrierConnectionId: otherConnection } });
      expect(gql.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      const mine = (await acme.rest.get('/api/phone-numbers?search=555')).body.data[0].id;
      expect((await acme.rest.put(`/api/phone-numbers/${mine}`, { carrierConnectionId: otherConnection })).status).toBe(404);
      expect((await acme.rest.get('/api/phone-numbers?search=0177')).body.meta.total).toBe(0);
    });

    it('updates the fields sent (null detaches the connection), lists {data, meta}, deletes with 204; others get 404', async () => {
      const id = (await acme.rest.post('/api/phone-numbers', { number: '+14155550188', carrierConnectionId: connection })).body.id;
      const { updatePhoneNumber } = await acme.graphql.ok(UpdatePhoneNumberDocument, { id, input: { label: 'Spare', carrierConnectionId: null } });
      expect(updatePhoneNumber).toMatchObject({ number: '+14155550188', label: 'Spare', carrierConnectionId: null, carrierConnection: null });
      expect((await acme.rest.put(`/api/phone-numbers/${id}`, { number: 'nope' })).body.code).toBe('BAD_USER_INPUT');
      const list = await acme.rest.get('/api/phone-numbers?limit=2&sortBy=number&sortOrder=asc');
      expect(list.body.meta).toMatchObject({ limit: 2, total: 3, hasNextPage: true });
      const { phoneNumbers } = await acme.graphql.ok(PhoneNumbersDocument, { limit: 100 });
      expect(phoneNumbers.meta.total).toBe(3);
      for (const [method, path] of [
        ['GET', `/api/phone-numbers/${id}`],
        ['PUT', `/api/phone-numbers/${id}`],
        ['DELETE', `/api/phone-numbers/${id}`],
      ] as const) {
        expect((await other.rest.request(method, path, method === 'PUT' ? { label: 'x' } : undefined)).status).toBe(404);
      }
      expect((await other.graphql.run(PhoneNumberDocument, { id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      expect((await other.graphql.run(DeletePhoneNumberDocument, { id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      const member = await addUser(app, acme, 'member');
      expect((await member.rest.post('/api/phone-numbers', { number: '+14155550199' })).status).toBe(403);
      expect((await member.graphql.run(DeletePhoneNumberDocument, { id })).errors?.[0]?.extensions.code).toBe('FORBIDDEN');
      expect((await acme.rest.delete(`/api/phone-numbers/${id}`)).status).toBe(204);
      expect((await acme.rest.get(`/api/phone-numbers/${id}`)).status).toBe(404);
    });
  });

  describe('programs on a carrier', () => {
    const programInput = async (org: TestOrganization, extra: Record<string, unknown> = {}) => ({
      name: 'Reminders',
      kind: 'campaign',
      flowId: await createFlow(org),
      audienceId: (await createAudience(org, 1)).id,
      ...extra,
    });
    const numberOf = async (org: TestOrganization, number: string, carrierConnectionId?: string) =>
      (await org.rest.post('/api/phone-numbers', { number, ...(carrierConnectionId ? { carrierConnectionId } : {}) })).body.id as string;

    it('a program shows carrier (simulator by default), fromNumberId and fromNumber on both doors', async () => {
      const simulated = await acme.rest.post('/api/programs', await programInput(acme));
      expect(simulated.body).toMatchObject({ carrier: 'simulator', fromNumberId: null });
      const from = await numberOf(acme, '+14155550111', connection);
      const rest = await acme.rest.post('/api/programs', await programInput(acme, { carrier: 'twilio', fromNumberId: from }));
      expect(rest.status).toBe(201);
      expect(rest.body).toMatchObject({
        carrier: 'twilio',
        fromNumberId: from,
        fromNumber: { id: from, number: '+14155550111', carrierConnectionId: connection },
      });
      const { createProgram } = await acme.graphql.ok(CreateCarrierProgramDocument, {
        input: (await programInput(acme, { carrier: 'twilio', fromNumberId: from })) as never,
      });
      expect(createProgram).toMatchObject({ carrier: 'twilio', fromNumberId: from, fromNumber: { id: from, carrierConnection: { id: connection } } });
      const { programs } = await acme.graphql.ok(CarrierProgramsDocument);
      expect(programs.data.filter((program) => program.fromNumber?.id === from)).toHaveLength(2);
    });

    it('a fromNumberId of another organization → 404 on both doors; an unknown carrier → 400 on both', async () => {
      const theirs = (await other.rest.get('/api/phone-numbers')).body.data[0].id;
      const input = await programInput(acme, { carrier: 'twilio', fromNumberId: theirs });
      expect((await acme.rest.post('/api/programs', input)).body.code).toBe('NOT_FOUND');
      expect((await acme.graphql.run(CreateCarrierProgramDocument, { input: input as never })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      const created = await acme.rest.post('/api/programs', await programInput(acme));
      expect((await acme.rest.put(`/api/programs/${created.body.id}`, { fromNumberId: theirs })).body.code).toBe('NOT_FOUND');
      expect(
        (await acme.graphql.run(UpdateCarrierProgramDocument, { id: created.body.id, input: { fromNumberId: theirs } })).errors?.[0]?.extensions.code,
      ).toBe('NOT_FOUND');
      expect((await acme.rest.post('/api/programs', { ...input, carrier: 'vonage', fromNumberId: undefined })).body.code).toBe('BAD_USER_INPUT');
      expect(
        (await acme.graphql.run(CreateCarrierProgramDocument, { input: { ...input, carrier: 'vonage', fromNumberId: undefined } as never })).errors?.[0]
          ?.extensions.code,
      ).toBe('BAD_USER_INPUT');
    });

    it('activating a twilio program answers 409 naming what is missing, on both doors; once ready it activates', async () => {
      const fresh = await app.organization('Fresh');
      const program = (await fresh.rest.post('/api/programs', await programInput(fresh, { carrier: 'twilio' }))).body.id;
      const rest = await fresh.rest.post(`/api/programs/${program}/activate`);
      expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
      expect(rest.body.detail).toMatch(/no twilio carrier connection/);
      expect(rest.body.detail).toMatch(/no fromNumberId/);
      const gql = await fresh.graphql.run(ActivateCarrierProgramDocument, { id: program });
      expect(gql.errors?.[0]?.extensions.code).toBe('CONFLICT');
      expect(gql.errors?.[0]?.message).toBe(rest.body.detail);

      const freshConnection = (await fresh.rest.post('/api/carrier-connections', { name: 'T', accountSid: fake.accountSid, authToken: fake.authToken })).body
        .id;
      const bare = await numberOf(fresh, '+14155550122');
      expect((await fresh.rest.put(`/api/programs/${program}`, { fromNumberId: bare })).status).toBe(200);
      const noConnection = await fresh.rest.post(`/api/programs/${program}/activate`);
      expect(noConnection.status).toBe(409);
      expect(noConnection.body.detail).toMatch(/the number \+14155550122 has no carrier connection/);
      expect(noConnection.body.detail).not.toMatch(/no fromNumberId|no twilio carrier connection/);

      await fresh.rest.put(`/api/phone-numbers/${bare}`, { carrierConnectionId: freshConnection });
      const { activateProgram } = await fresh.graphql.ok(ActivateCarrierProgramDocument, { id: program });
      expect(activateProgram).toMatchObject({ status: 'active', carrier: 'twilio', fromNumberId: bare });
    });

    it('without PUBLIC_URL a twilio program is refused (409 naming PUBLIC_URL); a simulator program activates without a number', async () => {
      const noUrl = await startTestApp({ telephony: { twilioApiBaseUrl: fake.url, credentialsKey: randomBytes(32) } });
      try {
        const org = await noUrl.organization();
        const id = (await org.rest.post('/api/carrier-connections', { name: 'T', accountSid: fake.accountSid, authToken: fake.authToken })).body.id;
        const from = await numberOf(org, '+14155550133', id);
        const program = (await org.rest.post('/api/programs', await programInput(org, { carrier: 'twilio', fromNumberId: from }))).body.id;
        const refused = await org.rest.post(`/api/programs/${program}/activate`);
        expect([refused.status, refused.body.code]).toEqual([409, 'CONFLICT']);
        expect(refused.body.detail).toMatch(/PUBLIC_URL is not set/);
        expect((await org.graphql.run(ActivateCarrierProgramDocument, { id: program })).errors?.[0]?.message).toMatch(/PUBLIC_URL/);
        const simulated = (await org.rest.post('/api/programs', await programInput(org))).body.id;
        expect((await org.rest.post(`/api/programs/${simulated}/activate`)).body.status).toBe('active');
      } finally {
        await noUrl.close();
      }
    });
  });
});

describe('calls-read', () => {
  const REST_FIELDS = [
    'id',
    'organizationId',
    'executionId',
    'programId',
    'contactId',
    'agentId',
    'conversationId',
    'direction',
    'from',
    'to',
    'status',
    'outcome',
    'answeredBy',
    'attempt',
    'carrier',
    'channel',
    'carrierConnectionId',
    'carrierCallId',
    'queuedAt',
    'answeredAt',
    'endedAt',
    'durationSeconds',
    'reachedNodeIds',
    'errorText',
    'creditsCharged',
    'turnLatency',
    'firstAudioMs',
    'analysis',
    'transfer',
    'createdAt',
    'updatedAt',
    'recording',
  ];

  const T0 = new Date('2026-11-20T09:00:00.000Z');
  const at = (hours: number) => new Date(T0.getTime() + hours * 3_600_000);

  let app: TestApp;
  let a: TestOrganization;
  let b: TestOrganization;
  let campaign: Campaign;
  /** Org A's calls, k1 oldest … k4 newest; kb is org B's call that names org A's records. */
  const k: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp();
    a = await app.organization('Calls A');
    b = await app.organization('Calls B');
    campaign = await campaignWithExecution(app, a, 3);
    const [c1, c2, c3] = campaign.contactIds as [string, string, string];
    const base = { organizationId: a.organizationId, executionId: campaign.executionId, programId: campaign.programId, agentId: campaign.agentId };
    k.k1 = await insertCall(app, {
      ...base,
      contactId: c1,
      executionContactId: campaign.queueRows.get(c1),
      attempt: 1,
      status: 'no_answer',
      outcome: 'no_answer',
      queuedAt: at(0),
      endedAt: at(0.01),
    });
    k.k2 = await insertCall(app, {
      ...base,
      contactId: c1,
      executionContactId: campaign.queueRows.get(c1),
      claimToken: 'claim-secret-token',
      attempt: 2,
      status: 'completed',
      outcome: 'answered',
      carrier: 'twilio',
      carrierCallId: 'CA0123456789abcdef',
      to: '+14155550111',
      queuedAt: at(1),
      answeredAt: at(1.001),
      endedAt: at(1.02),
      durationSeconds: 66,
      reachedNodeIds: ['start', 'confirm'],
      creditsCharged: 1,
    });
    k.k3 = await insertCall(app, {
      ...base,
      contactId: c2,
      executionContactId: campaign.queueRows.get(c2),
      status: 'failed',
      outcome: 'failed',
      errorText: 'carrier said "no"',
      queuedAt: at(2),
      endedAt: at(2.001),
      durationSeconds: 0,
    });
    k.k4 = await insertCall(app, {
      organizationId: a.organizationId,
      contactId: c3,
      direction: 'inbound',
      from: '+14155550777',
      to: '+14155550100',
      status: 'ringing',
      queuedAt: at(3),
    });
    k.kb = await insertCall(app, { ...base, organizationId: b.organizationId, contactId: c1, status: 'completed', queuedAt: at(1.5) });
  }, 120_000);
  afterAll(() => app?.close());

  /** The REST query string of GraphQL variables. */
  function query(variables: Record<string, unknown>): string {
    const params = new URLSearchParams(Object.entries(variables).map(([key, value]): [string, string] => [key, String(value)]));
    return params.size > 0 ? `?${params}` : '';
  }

  /** Both doors with the same arguments: the same page, or the same error code and fields. */
  async function both(org: TestOrganization, variables: Record<string, unknown>) {
    const rest = await org.rest.get(`/api/calls${query(variables)}`);
    const graphql = await org.graphql.run(CallsDocument, variables as CallsQueryVariables);
    if (rest.status === 200) {
      expect(graphql.errors).toBeUndefined();
      expect(graphql.data!.calls).toEqual(rest.body);
    }
    return { rest, graphql };
  }

  async function ids(org: TestOrganization, variables: Record<string, unknown>): Promise<string[]> {
    const { rest } = await both(org, variables);
    expect(rest.status).toBe(200);
    return rest.body.data.map((call: { id: string }) => call.id);
  }

  describe('GET /api/calls and calls(...)', () => {
    it('answers {data, meta} newest first with exactly the documented fields, the same on both doors', async () => {
      const { rest } = await both(a, {});
      expect(rest.status).toBe(200);
      expect(rest.body.data.map((call: { id: string }) => call.id)).toEqual([k.k4, k.k3, k.k2, k.k1]);
      expect(rest.body.meta).toEqual(withCursors({ page: 1, limit: 20, total: 4, totalPages: 1, hasNextPage: false, hasPreviousPage: false }));
      for (const call of rest.body.data) expect(Object.keys(call)).toEqual(REST_FIELDS);
      const k2 = rest.body.data[2];
      expect(k2).toMatchObject({
        id: k.k2,
        organizationId: a.organizationId,
        executionId: campaign.executionId,
        programId: campaign.programId,
        contactId: campaign.contactIds[0],
        agentId: campaign.agentId,
        direction: 'outbound',
        from: '+14155550000',
        to: '+14155550111',
        status: 'completed',
        outcome: 'answered',
        attempt: 2,
        carrier: 'twilio',
        carrierConnectionId: null,
        carrierCallId: 'CA0123456789abcdef',
        queuedAt: at(1).toISOString(),
        answeredAt: at(1.001).toISOString(),
        endedAt: at(1.02).toISOString(),
        durationSeconds: 66,
        reachedNodeIds: ['start', 'confirm'],
        errorText: null,
        creditsCharged: 1,
      });
      expect(JSON.stringify(rest.body)).not.toContain('claim-secret-token');
      expect(JSON.stringify(rest.body)).not.toContain(campaign.queueRows.get(campaign.contactIds[0]!));
    });

    it('filters by execution, program, contact, status, direction and search', async () => {
      const [c1, c2, c3] = campaign.contactIds;
      expect(await ids(a, { executionId: campaign.executionId })).toEqual([k.k3, k.k2, k.k1]);
      expect(await ids(a, { programId: campaign.programId })).toEqual([k.k3, k.k2, k.k1]);
      expect(await ids(a, { contactId: c1 })).toEqual([k.k2, k.k1]);
      expect(await ids(a, { contactId: c2 })).toEqual([k.k3]);
      expect(await ids(a, { contactId: c3, direction: 'inbound' })).toEqual([k.k4]);
      expect(await ids(a, { direction: 'outbound' })).toEqual([k.k3, k.k2, k.k1]);
      expect(await ids(a, { status: 'completed' })).toEqual([k.k2]);
      expect(await ids(a, { status: 'completed', contactId: c2 })).toEqual([]);
      expect(await ids(a, { search: '0777' })).toEqual([k.k4]);
      expect(await ids(a, { search: '555 0111'.replace(' ', '') })).toEqual([k.k2]);
    });

    it('filters by outcome, alone and with the other filters', async () => {
      expect(await ids(a, { outcome: 'answered' })).toEqual([k.k2]);
      expect(await ids(a, { outcome: 'no_answer' })).toEqual([k.k1]);
      expect(await ids(a, { outcome: 'failed', programId: campaign.programId })).toEqual([k.k3]);
      expect(await ids(a, { outcome: 'voicemail' })).toEqual([]);
      expect(await ids(b, { outcome: 'answered' })).toEqual([]);
    });

    it('takes a queuedAt range: queuedAfter inclusive, queuedBefore exclusive', async () => {
      expect(await ids(a, { queuedAfter: at(1).toISOString() })).toEqual([k.k4, k.k3, k.k2]);
      expect(await ids(a, { queuedBefore: at(1).toISOString() })).toEqual([k.k1]);
      expect(await ids(a, { queuedAfter: at(1).toISOString(), queuedBefore: at(3).toISOString() })).toEqual([k.k3, k.k2]);
      expect(await ids(a, { queuedAfter: '2026-11-20T10:30:00+01:00', queuedBefore: at(2.5).toISOString() })).toEqual([k.k3, k.k2]);
    });

    it('pages and sorts like the other lists', async () => {
      const { rest } = await both(a, { page: 2, limit: 3 });
      expect(rest.body.data.map((call: { id: string }) => call.id)).toEqual([k.k1]);
      expect(rest.body.meta).toEqual(withCursors({ page: 2, limit: 3, total: 4, totalPages: 2, hasNextPage: false, hasPreviousPage: true }));
      expect(await ids(a, { sortBy: 'queuedAt', sortOrder: 'asc' })).toEqual([k.k1, k.k2, k.k3, k.k4]);
      // Calls without a duration come last, whichever the direction.
      const descending = await ids(a, { sortBy: 'durationSeconds', sortOrder: 'desc' });
      expect(descending.slice(0, 2)).toEqual([k.k2, k.k3]);
      expect(descending.slice(2).sort()).toEqual([k.k1, k.k4].sort());
      const ascending = await ids(a, { sortBy: 'durationSeconds', sortOrder: 'asc' });
      expect(ascending.slice(0, 2)).toEqual([k.k3, k.k2]);
      expect(ascending.slice(2).sort()).toEqual([k.k1, k.k4].sort());
    });

    it.each([
      ['a status that does not exist', { status: 'answered' }, 'status'],
      ['a direction that does not exist', { direction: 'sideways' }, 'direction'],
      ['an outcome that does not exist', { outcome: 'completed' }, 'outcome'],
      ['an executionId that is not a UUID', { executionId: 'not-a-uuid' }, 'executionId'],
      ['a contactId that is not a UUID', { contactId: '42' }, 'contactId'],
      ['a date that is not ISO 8601', { queuedAfter: 'yesterday' }, 'queuedAfter'],
      ['a range that ends before it starts', { queuedAfter: at(2).toISOString(), queuedBefore: at(1).toISOString() }, 'queuedBefore'],
      ['limit 0', { limit: 0 }, 'limit'],
      ['limit 101', { limit: 101 }, 'limit'],
      ['page 0', { page: 0 }, 'page'],
      ['a sortBy off the allow-list', { sortBy: 'to' }, 'sortBy'],
    ])('%s: 400 BAD_USER_INPUT on both doors', async (_label, variables, field) => {
      const { rest, graphql } = await both(a, variables);
      expect([rest.status, rest.body.code]).toEqual([400, 'BAD_USER_INPUT']);
      expect(graphql.errors?.map((error) => error.extensions.code)).toEqual(['BAD_USER_INPUT']);
      expect(JSON.stringify(rest.body)).toContain(field);
      expect(JSON.stringify(graphql.errors)).toContain(field);
    });

    it('scopes every filter to the caller: another organization’s ids match nothing, and its own rows that name them are its own', async () => {
      expect(await ids(b, {})).toEqual([k.kb]);
      expect(await ids(b, { contactId: campaign.contactIds[1] })).toEqual([]);
      expect(await ids(b, { executionId: campaign.executionId, status: 'no_answer' })).toEqual([]);
      expect(await ids(a, { status: 'completed', queuedAfter: at(1.4).toISOString(), queuedBefore: at(1.6).toISOString() })).toEqual([]);
    });
  });

  describe('GET /api/calls/{id} and call(id)', () => {
    it('answers the call, the same on both doors, with its relations on GraphQL', async () => {
      const rest = await a.rest.get(`/api/calls/${k.k2}`);
      expect(rest.status).toBe(200);
      expect(Object.keys(rest.body)).toEqual(REST_FIELDS);
      const list = await a.rest.get(`/api/calls?contactId=${campaign.contactIds[0]}`);
      expect(rest.body).toEqual(list.body.data[0]);
      const { call } = await a.graphql.ok(CallWithRelationsDocument, { id: k.k2 });
      const { execution, contact, program, agent, ...fields } = call;
      expect(fields).toEqual(rest.body);
      expect([execution?.id, contact?.id, program?.id, agent?.id]).toEqual([
        campaign.executionId,
        campaign.contactIds[0],
        campaign.programId,
        campaign.agentId,
      ]);
      const inbound = await a.graphql.ok(CallWithRelationsDocument, { id: k.k4 });
      expect([inbound.call.execution, inbound.call.program, inbound.call.agent, inbound.call.contact?.id]).toEqual([null, null, null, campaign.contactIds[2]]);
    });

    it('another organization’s call, an unknown id and a malformed id are 404 on both doors', async () => {
      for (const id of [k.k2, '00000000-0000-4000-8000-000000000000', 'nope']) {
        const rest = await b.rest.get(`/api/calls/${id}`);
        expect([rest.status, rest.body.code]).toEqual([404, 'NOT_FOUND']);
        const graphql = await b.graphql.run(CallWithRelationsDocument, { id });
        expect(graphql.errors?.map((error) => error.extensions.code)).toEqual(['NOT_FOUND']);
      }
    });

    it('a call naming another organization’s records shows none of them', async () => {
      const { call } = await b.graphql.ok(CallWithRelationsDocument, { id: k.kb });
      expect(call.contactId).toBe(campaign.contactIds[0]);
      expect([call.execution, call.contact, call.program, call.agent]).toEqual([null, null, null, null]);
    });
  });

  describe('Execution.calls and Contact.calls', () => {
    it('page the calls of an execution, newest first, with a status filter', async () => {
      const first = await a.graphql.ok(ExecutionCallsDocument, { id: campaign.executionId, limit: 2 });
      expect(first.execution.calls.data.map((call) => call.id)).toEqual([k.k3, k.k2]);
      expect(first.execution.calls.meta).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2, hasNextPage: true, hasPreviousPage: false });
      const second = await a.graphql.ok(ExecutionCallsDocument, { id: campaign.executionId, limit: 2, page: 2 });
      expect(second.execution.calls.data.map((call) => call.id)).toEqual([k.k1]);
      const failed = await a.graphql.ok(ExecutionCallsDocument, { id: campaign.executionId, status: 'failed' });
      expect(failed.execution.calls.data.map((call) => call.id)).toEqual([k.k3]);
      // Org B's call names the execution, but is not org A's.
      expect(first.execution.calls.data.map((call) => call.id)).not.toContain(k.kb);
    });

    it('page the calls of each contact, only the organization’s own', async () => {
      const { contacts } = await a.graphql.ok(ContactsWithCallsDocument, { limit: 10, callLimit: 5 });
      const byContact = Object.fromEntries(contacts.data.map((contact) => [contact.id, contact.calls]));
      const [c1, c2, c3] = campaign.contactIds as [string, string, string];
      expect(byContact[c1]!.data.map((call) => call.id)).toEqual([k.k2, k.k1]);
      expect(byContact[c1]!.meta.total).toBe(2);
      expect(byContact[c2]!.data.map((call) => call.id)).toEqual([k.k3]);
      expect(byContact[c3]!.data).toEqual([{ id: k.k4, contactId: c3, execution: null, contact: { id: c3 } }]);
      expect(byContact[c1]!.data[0]).toEqual({ id: k.k2, contactId: c1, execution: { id: campaign.executionId }, contact: { id: c1 } });
    });

    it('batch: contacts with their calls, executions and contacts cost the same statements for 2 and 12 contacts', async () => {
      async function statementsFor(contacts: number): Promise<number> {
        const org = await app.organization(`Batch ${contacts}`);
        const seeded = await campaignWithExecution(app, org, contacts);
        for (const contactId of seeded.contactIds) {
          for (const attempt of [1, 2]) {
            await insertCall(app, { organizationId: org.organizationId, executionId: seeded.executionId, contactId, attempt, queuedAt: at(attempt) });
          }
        }
        let answered = 0;
        const statements = await recordStatements(app, async () => {
          const { contacts: page } = await org.graphql.ok(ContactsWithCallsDocument, { limit: 20, callLimit: 5 });
          for (const contact of page.data) {
            expect(contact.calls.data).toHaveLength(2);
            for (const call of contact.calls.data) expect([call.execution?.id, call.contact?.id]).toEqual([seeded.executionId, contact.id]);
            answered += 1;
          }
        });
        expect(answered).toBe(contacts);
        return statements.length;
      }
      const two = await statementsFor(2);
      const twelve = await statementsFor(12);
      expect(two).toBeGreaterThan(0);
      expect(twelve).toBe(two);
    }, 120_000);

    it('count in the GraphQL cost: nested call lists multiply by their limits', async () => {
      const res = await fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': a.apiKey },
        body: JSON.stringify({ query: '{ calls(limit: 100) { data { id execution { calls(limit: 100) { data { id } } } } } }' }),
      });
      const body = (await res.json()) as { errors?: { message: string; extensions: { code: string } }[] };
      expect(body.errors?.map((error) => error.extensions.code)).toEqual(['BAD_USER_INPUT']);
      expect(body.errors?.[0]?.message).toMatch(/would cost \d+/);
      const small = await fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': a.apiKey },
        body: JSON.stringify({ query: '{ calls(limit: 5) { data { id execution { calls(limit: 5) { data { id } } } } } }' }),
      });
      expect(((await small.json()) as { errors?: unknown }).errors).toBeUndefined();
    });
  });
});

describe('calls-csv', () => {
  const COLUMNS = [
    'contactId',
    'contactName',
    'phone',
    'contactStatus',
    'attempts',
    'lastCallId',
    'lastCallStatus',
    'outcome',
    'queuedAt',
    'answeredAt',
    'endedAt',
    'durationSeconds',
    'errorText',
    'creditsCharged',
    'firstAudioMs',
    'toolCalls',
    'transferredTo',
    'transferDestination',
    'transferredAt',
    'transferDialStatus',
  ];
  const T0 = new Date('2026-11-20T09:00:00.000Z');
  const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

  /** An RFC 4180 reader: quoted fields with doubled quotes and line breaks, CRLF records. */
  function parseCsv(text: string): string[][] {
    const records: string[][] = [];
    let record: string[] = [];
    let field = '';
    let quoted = false;
    for (let i = 0; i < text.length; i += 1) {
      const char = text[i]!;
      if (quoted) {
        if (char === '"' && text[i + 1] === '"') {
          field += '"';
          i += 1;
        } else if (char === '"') quoted = false;
        else field += char;
      } else if (char === '"') quoted = true;
      else if (char === ',') {
        record.push(field);
        field = '';
      } else if (char === '\r' && text[i + 1] === '\n') {
        record.push(field);
        records.push(record);
        record = [];
        field = '';
        i += 1;
      } else field += char;
    }
    if (field !== '' || record.length > 0) throw new Error(`the CSV does not end with CRLF: ${JSON.stringify(text.slice(-80))}`);
    return records;
  }

  let app: TestApp;
  let a: TestOrganization;
  let b: TestOrganization;
  let campaign: Campaign;

  beforeAll(async () => {
    // A small answer cap: the CSV goes past it, a JSON answer could not.
    app = await startTestApp({ responseMaxBytes: 64 * 1024 });
    a = await app.organization('CSV A');
    b = await app.organization('CSV B');
    campaign = await campaignWithExecution(app, a, 3);
  }, 120_000);
  afterAll(() => app?.close());

  const csvOf = (org: TestOrganization, executionId: string) =>
    fetch(`${app.baseUrl}/api/executions/${executionId}/calls.csv`, { headers: { 'x-api-key': org.apiKey } });

  describe('GET /api/executions/{id}/calls.csv', () => {
    it('one row per contact, called or not, with its last call; quoted by RFC 4180 and formula cells neutralized', async () => {
      const [c1, c2, c3] = campaign.contactIds as [string, string, string];
      const row = (contactId: string) => campaign.queueRows.get(contactId);
      const base = { organizationId: a.organizationId, executionId: campaign.executionId, programId: campaign.programId };
      await insertCall(app, { ...base, contactId: c1, executionContactId: row(c1), attempt: 1, status: 'no_answer', outcome: 'no_answer', queuedAt: at(0) });
      const last1 = await insertCall(app, {
        ...base,
        contactId: c1,
        executionContactId: row(c1),
        attempt: 2,
        status: 'completed',
        outcome: 'answered',
        queuedAt: at(30),
        answeredAt: at(30.1),
        endedAt: at(31),
        durationSeconds: 54,
        creditsCharged: 1,
      });
      // A later-queued call of a lower attempt is not the last one.
      await insertCall(app, { ...base, contactId: c1, executionContactId: row(c1), attempt: 1, status: 'failed', queuedAt: at(40) });
      const last2 = await insertCall(app, {
        ...base,
        contactId: c2,
        executionContactId: row(c2),
        status: 'failed',
        outcome: 'failed',
        errorText: '=HYPERLINK("http://evil.example","click"), then\r\nmore',
        queuedAt: at(5),
      });
      // Another organization's call naming this execution's contact is not its row.
      await insertCall(app, { ...base, organizationId: b.organizationId, contactId: c3, executionContactId: row(c3), status: 'completed', queuedAt: at(60) });
      await app.sql(`update execution_contacts set status = 'completed', attempts = 2 where id = ?`, [row(c1)]);
      await app.sql(`update execution_contacts set status = 'failed', attempts = 1 where id = ?`, [row(c2)]);

      // The contact's name as it is now: a name given since the call shows; one without a name is empty.
      await app.sql(`update contacts set name = ? where id = ?`, ['Ada "the caller", Jr.', c1]);
      await app.sql(`update contacts set name = null where id = ?`, [c3]);
      const res = await csvOf(a, campaign.executionId);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="execution-${campaign.executionId}-calls.csv"`);
      expect(res.headers.get('transfer-encoding')).toBe('chunked');
      expect(res.headers.get('content-length')).toBeNull();
      const text = await res.text();
      expect(text).toContain('"\'=HYPERLINK(""http://evil.example"",""click""), then\r\nmore"');
      const [header, ...rows] = parseCsv(text);
      expect(header).toEqual(COLUMNS);
      const byContact = Object.fromEntries(rows.map((cells) => [cells[0], Object.fromEntries(COLUMNS.map((column, i) => [column, cells[i]]))]));
      expect(rows).toHaveLength(3);
      const phones = await app.sql<{ contact_id: string; phone: string }>('select contact_id, phone from execution_contacts where execution_id = ?', [
        campaign.executionId,
      ]);
      const phoneOf = Object.fromEntries(phones.map((p) => [p.contact_id, p.phone]));
      expect(byContact[c1]).toEqual({
        contactId: c1,
        contactName: 'Ada "the caller", Jr.',
        phone: phoneOf[c1],
        contactStatus: 'completed',
        attempts: '2',
        lastCallId: last1,
        lastCallStatus: 'completed',
        outcome: 'answered',
        queuedAt: at(30).toISOString(),
        answeredAt: at(30.1).toISOString(),
        endedAt: at(31).toISOString(),
        durationSeconds: '54',
        errorText: '',
        creditsCharged: '1',
        firstAudioMs: '',
        toolCalls: '',
        transferredTo: '',
        transferDestination: '',
        transferredAt: '',
        transferDialStatus: '',
      });
      expect(byContact[c2]).toMatchObject({
        lastCallId: last2,
        lastCallStatus: 'failed',
        contactStatus: 'failed',
        errorText: '\'=HYPERLINK("http://evil.example","click"), then\r\nmore',
        creditsCharged: '0',
      });
      expect(byContact[c3]).toEqual({
        contactId: c3,
        contactName: '',
        phone: phoneOf[c3],
        contactStatus: 'pending',
        attempts: '0',
        lastCallId: '',
        lastCallStatus: '',
        outcome: '',
        queuedAt: '',
        answeredAt: '',
        endedAt: '',
        durationSeconds: '',
        errorText: '',
        creditsCharged: '',
        firstAudioMs: '',
        toolCalls: '',
        transferredTo: '',
        transferDestination: '',
        transferredAt: '',
        transferDialStatus: '',
      });
    });

    it('another organization’s execution, an unknown id and a malformed id answer 404 problem+json before any CSV', async () => {
      for (const id of [campaign.executionId, '00000000-0000-4000-8000-000000000000', 'nope']) {
        const res = await csvOf(b, id);
        expect(res.status).toBe(404);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(((await res.json()) as { code: string }).code).toBe('NOT_FOUND');
      }
      // The REST client checks the answers against /api/openapi.json: the CSV is documented as text/csv.
      const documented = await a.rest.get(`/api/executions/${campaign.executionId}/calls.csv`);
      expect(documented.status).toBe(200);
    });

    it('streams thousands of rows complete, past RESPONSE_MAX_BYTES, reading them page by page', async () => {
      const big = await app.organization('CSV big');
      const seeded = await campaignWithExecution(app, big, 1);
      const rows = 3000;
      await app.sql(
        `insert into execution_contacts (id, created_at, updated_at, organization_id, execution_id, contact_id, phone, status, attempts, reached_node_ids)
         select gen_random_uuid(), now(), now(), ?, ?, null, '+1415' || lpad(n::text, 7, '0'), 'completed', 1, '[]'::jsonb from generate_series(1, ?) n`,
        [big.organizationId, seeded.executionId, rows],
      );
      await app.sql(
        `insert into calls (id, created_at, updated_at, organization_id, execution_id, execution_contact_id, direction, to_number, status, outcome, attempt, carrier, queued_at, reached_node_ids, error_text, credits_charged)
         select gen_random_uuid(), now(), now(), ec.organization_id, ec.execution_id, ec.id, 'outbound', ec.phone, 'completed', 'answered', 1, 'simulator', now(), '[]'::jsonb, '-' || ec.phone, 1
         from execution_contacts ec where ec.execution_id = ? and ec.contact_id is null`,
        [seeded.executionId],
      );
      let text = '';
      const csvStatements = await recordStatements(app, async () => {
        const res = await csvOf(big, seeded.executionId);
        expect(res.status).toBe(200);
        expect(res.headers.get('transfer-encoding')).toBe('chunked');
        text = await res.text();
      });
      expect(Buffer.byteLength(text)).toBeGreaterThan(app.config.responseMaxBytes);
      const records = parseCsv(text);
      expect(records).toHaveLength(rows + 2); // the header, the contact made through the API, the 3000
      const ids = new Set(records.slice(1).map((cells) => cells[5]));
      expect(ids.size).toBe(rows + 1); // every seeded call once (and one empty lastCallId)
      expect(records.filter((cells) => cells[12]?.startsWith("'-+1415"))).toHaveLength(rows);
      // 3001 rows read 500 at a time: at least 7 statements, never one for everything.
      expect(csvStatements.filter((sql) => sql.includes('left join lateral')).length).toBeGreaterThanOrEqual(7);
    }, 120_000);

    it('stops reading when the client goes away', async () => {
      const big = await app.organization('CSV abandoned');
      const seeded = await campaignWithExecution(app, big, 1);
      const rows = 10_000;
      await app.sql(
        `insert into execution_contacts (id, created_at, updated_at, organization_id, execution_id, contact_id, phone, status, attempts, reached_node_ids)
         select gen_random_uuid(), now(), now(), ?, ?, null, '+1415' || lpad(n::text, 7, '0'), 'failed', 1, '[]'::jsonb from generate_series(1, ?) n`,
        [big.organizationId, seeded.executionId, rows],
      );
      // About 4 KB a row: 40 MB in all, far more than the sockets' buffers hold (a few MB).
      await app.sql(
        `insert into calls (id, created_at, updated_at, organization_id, execution_id, execution_contact_id, direction, to_number, status, attempt, carrier, queued_at, reached_node_ids, error_text, credits_charged)
         select gen_random_uuid(), now(), now(), ec.organization_id, ec.execution_id, ec.id, 'outbound', ec.phone, 'failed', 1, 'simulator', now(), '[]'::jsonb, repeat('x', 4000), 0
         from execution_contacts ec where ec.execution_id = ? and ec.contact_id is null`,
        [seeded.executionId],
      );
      const pages = Math.ceil((rows + 1) / 500);
      const statements = await recordStatements(app, async () => {
        // A connection of its own (agent: false), not one of fetch's pooled keep-alive connections: the
        // insert above takes seconds on a busy machine (it held the event loop when PGlite ran on it),
        // and a pooled connection idle from before it could be closed by the server's keep-alive timer
        // just as it is reused, which failed the request with ECONNRESET. The client leaves by
        // destroying the socket after the first chunk.
        const first = await new Promise<{ status: number | undefined; text: string }>((resolve, reject) => {
          const req = httpGet(
            `${app.baseUrl}/api/executions/${seeded.executionId}/calls.csv`,
            { headers: { 'x-api-key': big.apiKey }, agent: false },
            (res) => {
              res.once('data', (chunk: Buffer) => {
                resolve({ status: res.statusCode, text: chunk.toString('utf8') });
                req.destroy();
              });
            },
          );
          req.on('error', reject); // after the destroy, a settled promise ignores it
        });
        expect(first.status).toBe(200);
        expect(first.text.startsWith('contactId,contactName,phone,')).toBe(true);
        // Give the server time to notice; a server that kept reading would run every page meanwhile
        // (a slower server reads fewer pages in this time, never more).
        await new Promise((resolve) => setTimeout(resolve, 3000));
      });
      const read = statements.filter((sql) => sql.includes('left join lateral')).length;
      expect(read).toBeGreaterThan(0);
      expect(read).toBeLessThan(pages / 2);
      // The gateway still answers.
      expect((await big.rest.get('/api/calls?limit=1')).status).toBe(200);
    }, 120_000);
  });
});

describe('simulated-campaign', () => {
  // An offline campaign through the doors: the simulated carrier drives the same call records a
  // real one does, and what a finished execution shows (calls on both doors, the CSV) adds up to
  // its counters.
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    other = await app.organization('Other');
  });
  afterAll(() => app?.close());

  function parseCsv(text: string): Record<string, string>[] {
    const [header, ...rows] = text
      .trimEnd()
      .split('\r\n')
      .map((line) => line.split(','));
    return rows.map((row) => Object.fromEntries(header.map((column, index) => [column, row[index] ?? ''])));
  }

  it('a finished campaign shows each contact’s calls, on both doors and as CSV, adding up to its counters', async () => {
    const audience = await createAudience(acme, 12);
    const flow = await acme.rest.post('/api/call-flows', FLOW);
    const number = await acme.rest.post('/api/phone-numbers', { number: '+14155550142', label: 'Caller ID' });
    const program = await acme.rest.post('/api/programs', {
      name: 'Offline',
      kind: 'campaign',
      flowId: flow.body.id,
      audienceId: audience.id,
      fromNumberId: number.body.id,
      maxConcurrentCalls: 4,
      retryPolicy: { maxAttempts: 2, retryDelayMinutes: 0 },
    });
    expect(program.body).toMatchObject({ carrier: 'simulator', fromNumberId: number.body.id });
    expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
    await acme.grantCredits(100);
    const execution = (await acme.rest.post(`/api/programs/${program.body.id}/executions`)).body;
    expect((await acme.rest.post(`/api/executions/${execution.id}/start`)).status).toBe(200);

    const runner = testRunner(app, { dialer: new SimulatedDialer({ seed: 'offline', speedMs: 5 }), logger: createLogger('silent'), intervalMs: 10 });
    runner.start();
    let done: Record<string, number & string>;
    try {
      done = (await waitForExecution(acme, execution.id, (row) => row.status === 'completed')) as never;
    } finally {
      await runner.stop();
    }

    // REST: every call, each one final, through the simulator with the program's caller ID.
    const rest = (await acme.rest.get(`/api/calls?executionId=${execution.id}&limit=100`)).body;
    const calls = rest.data as Record<string, unknown>[];
    expect(rest.meta.total).toBe(calls.length);
    expect(calls.length).toBe(done.creditsSpent);
    expect(calls.every((call) => call.carrier === 'simulator' && /^SM[0-9a-f]{32}$/.test(String(call.carrierCallId)) && call.from === '+14155550142')).toBe(
      true,
    );
    expect(calls.every((call) => ['completed', 'busy', 'no_answer', 'failed'].includes(String(call.status)) && call.endedAt !== null)).toBe(true);
    const connected = calls.filter((call) => call.outcome === 'answered' || call.outcome === 'voicemail' || call.outcome === 'voicemail_left');
    expect(connected.every((call) => call.status === 'completed' && call.answeredAt !== null)).toBe(true);
    // A simulated call lasts as long as it was played: its duration agrees with its own answeredAt → endedAt.
    for (const call of connected) {
      expect(call.durationSeconds).toBe(Math.ceil((Date.parse(String(call.endedAt)) - Date.parse(String(call.answeredAt))) / 1000));
    }
    expect(connected.filter((call) => call.outcome === 'answered').every((call) => JSON.stringify(call.reachedNodeIds) === '["start","hello","end"]')).toBe(
      true,
    );
    expect(
      calls.filter((call) => !connected.includes(call)).every((call) => (call.reachedNodeIds as string[]).length === 0 && call.durationSeconds === 0),
    ).toBe(true);

    // Each contact: its calls numbered 1, 2, …; the last one decides whether it was reached.
    const byContact = new Map<string, Record<string, unknown>[]>();
    for (const call of calls) byContact.set(String(call.contactId), [...(byContact.get(String(call.contactId)) ?? []), call]);
    expect([...byContact.keys()].sort()).toEqual([...audience.contactIds].sort());
    const last = new Map([...byContact].map(([contactId, list]) => [contactId, list.sort((a, b) => Number(a.attempt) - Number(b.attempt)).at(-1)!]));
    for (const list of byContact.values()) expect(list.map((call) => call.attempt)).toEqual(list.map((_call, index) => index + 1));
    const reached = [...last.values()].filter(
      (call) => call.outcome === 'answered' || call.outcome === 'voicemail' || call.outcome === 'voicemail_left',
    ).length;
    expect(done).toMatchObject({ contactsCompleted: reached, contactsFailed: 12 - reached, contactsPending: 0, contactsInProgress: 0 });

    // GraphQL: the same calls, nested under the execution and at the root.
    const nested = await acme.graphql.ok(ExecutionCallsDocument, { id: execution.id, limit: 100 });
    expect(nested.execution.calls.data.map((call) => call.id).sort()).toEqual(calls.map((call) => call.id).sort());
    const root = await acme.graphql.ok(CallsDocument, { executionId: execution.id, limit: 100 });
    expect(root.calls.meta.total).toBe(calls.length);
    // Nested, the total is the kept one too (list_row_counts), in pages and past the end, as REST reads it.
    const paged = await acme.graphql.ok(ExecutionCallsDocument, { id: execution.id, page: 2, limit: 5 });
    expect(paged.execution.calls.data.map((call) => call.id)).toEqual(
      (await acme.rest.get(`/api/calls?executionId=${execution.id}&page=2&limit=5`)).body.data.map((call: { id: string }) => call.id),
    );
    expect(paged.execution.calls.meta).toMatchObject({ total: calls.length, hasNextPage: calls.length > 10, hasPreviousPage: true });
    await app.sql(`insert into list_row_counts (organization_id, list, scope_id, rows) values (?, 'calls.execution', ?, 1000000)`, [
      acme.organizationId,
      execution.id,
    ]);
    const past = await acme.graphql.ok(ExecutionCallsDocument, { id: execution.id, page: 1000, limit: 5 });
    expect(past.execution.calls).toMatchObject({ data: [], meta: { total: calls.length + 1_000_000 } });
    expect((await acme.rest.get(`/api/calls?executionId=${execution.id}&limit=1`)).body.meta.total).toBe(calls.length + 1_000_000);
    await app.sql(`delete from list_row_counts where organization_id = ? and rows = 1000000`, [acme.organizationId]);
    // A filtered nested page still counts its matches.
    const completed = calls.filter((call) => call.status === 'completed').length;
    expect((await acme.graphql.ok(ExecutionCallsDocument, { id: execution.id, limit: 1, status: 'completed' })).execution.calls.meta.total).toBe(completed);

    // The CSV: one row per contact with its last call, matching the list.
    const csv = await fetch(`${app.baseUrl}/api/executions/${execution.id}/calls.csv`, { headers: { 'x-api-key': acme.apiKey } });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = parseCsv(await csv.text());
    expect(rows).toHaveLength(12);
    for (const row of rows) {
      const call = last.get(row.contactId)!;
      expect({ lastCallId: row.lastCallId, outcome: row.outcome, attempts: Number(row.attempts), phone: row.phone }).toEqual({
        lastCallId: call.id,
        outcome: call.outcome,
        attempts: call.attempt,
        phone: call.to,
      });
      expect(row.contactStatus).toBe(call.outcome === 'answered' || call.outcome === 'voicemail' || call.outcome === 'voicemail_left' ? 'completed' : 'failed');
    }

    // Another organization sees none of it.
    expect((await other.rest.get(`/api/calls/${calls[0].id}`)).status).toBe(404);
    expect((await other.rest.get(`/api/calls?executionId=${execution.id}`)).body.meta.total).toBe(0);
    expect((await fetch(`${app.baseUrl}/api/executions/${execution.id}/calls.csv`, { headers: { 'x-api-key': other.apiKey } })).status).toBe(404);
  });
});
