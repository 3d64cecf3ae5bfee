import { randomBytes } from 'node:crypto';
import {
  ActivateCarrierProgramDocument,
  CarrierProgramsDocument,
  CreateCarrierProgramDocument,
  CreatePhoneNumberDocument,
  DeletePhoneNumberDocument,
  PhoneNumberDocument,
  PhoneNumbersDocument,
  UpdateCarrierProgramDocument,
  UpdatePhoneNumberDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { addUser } from '../helpers/users.js';
import { createAudience, createFlow } from '../programs/fixtures.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';

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
    expect(rest.body).toMatchObject({ number: '+14155550100', label: 'Main line', carrierConnectionId: connection, carrierConnection: { id: connection, authTokenLast4: fake.authToken.slice(-4) } });
    const { createPhoneNumber } = await acme.graphql.ok(CreatePhoneNumberDocument, { input: { number: '+442071838750' } });
    expect(createPhoneNumber).toMatchObject({ number: '+442071838750', label: null, carrierConnectionId: null, carrierConnection: null });
    const { phoneNumber } = await acme.graphql.ok(PhoneNumberDocument, { id: rest.body.id });
    expect(phoneNumber).toEqual(rest.body);
    expect(JSON.stringify([rest.body, phoneNumber])).not.toContain(fake.authToken);
  });

  it.each([['4155550100'], ['+04155550100'], ['+1415555010012345'], ['+1 415 555 0100'], ['+1']])('number %j → 400 BAD_USER_INPUT naming number, same on both doors', async (number) => {
    const rest = await acme.rest.post('/api/phone-numbers', { number });
    expect([rest.status, rest.body.code, rest.body.errors?.[0]?.field]).toEqual([400, 'BAD_USER_INPUT', 'number']);
    const gql = await acme.graphql.run(CreatePhoneNumberDocument, { input: { number } });
    expect([gql.errors?.[0]?.extensions.code, gql.errors?.[0]?.extensions.errors?.[0]?.field]).toEqual(['BAD_USER_INPUT', 'number']);
  });

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
    for (const [method, path] of [['GET', `/api/phone-numbers/${id}`], ['PUT', `/api/phone-numbers/${id}`], ['DELETE', `/api/phone-numbers/${id}`]] as const) {
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
    expect(rest.body).toMatchObject({ carrier: 'twilio', fromNumberId: from, fromNumber: { id: from, number: '+14155550111', carrierConnectionId: connection } });
    const { createProgram } = await acme.graphql.ok(CreateCarrierProgramDocument, { input: (await programInput(acme, { carrier: 'twilio', fromNumberId: from })) as never });
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
    expect((await acme.graphql.run(UpdateCarrierProgramDocument, { id: created.body.id, input: { fromNumberId: theirs } })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await acme.rest.post('/api/programs', { ...input, carrier: 'vonage', fromNumberId: undefined })).body.code).toBe('BAD_USER_INPUT');
    expect((await acme.graphql.run(CreateCarrierProgramDocument, { input: { ...input, carrier: 'vonage', fromNumberId: undefined } as never })).errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
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

    const freshConnection = (await fresh.rest.post('/api/carrier-connections', { name: 'T', accountSid: fake.accountSid, authToken: fake.authToken })).body.id;
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
