import {
  ContactDocument,
  ContactsDocument,
  CreateContactDocument,
  ImportContactsDocument,
  UpdateContactDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

const fieldsOf = (errors: { field: string }[] | undefined) => [...new Set((errors ?? []).map((error) => error.field))].sort();
const phone = (i: number) => `+3361${String(i).padStart(7, '0')}`;
const countContacts = async (org: TestOrganization) =>
  (await app.sql<{ n: number }>('select count(*)::int as n from contacts where organization_id = ?', [org.organizationId]))[0]!.n;

describe('a contact', () => {
  it('is created with its fields on both doors and read back the same', async () => {
    const input = { name: 'Ada Lovelace', phone: '+442071234567', timeZone: 'Europe/London', attributes: { renewalDate: '2026-03-01', plan: 'gold' } };
    const rest = await acme.rest.post('/api/contacts', input);
    expect(rest.status).toBe(201);
    expect(rest.body).toMatchObject({ ...input, optedOut: false, organizationId: acme.organizationId });
    const { contact } = await acme.graphql.ok(ContactDocument, { id: rest.body.id });
    expect(contact).toEqual(rest.body);
    const { createContact } = await acme.graphql.ok(CreateContactDocument, { input: { phone: '+14155550199', timeZone: 'UTC' } });
    expect(createContact).toMatchObject({ name: null, timeZone: 'UTC', attributes: {}, optedOut: false });
  });

  it('keeps fields not sent on update; null clears the nullable ones', async () => {
    const { body: created } = await acme.rest.post('/api/contacts', { name: 'Keep', phone: '+14155550111', timeZone: 'America/New_York' });
    const rest = await acme.rest.put(`/api/contacts/${created.id}`, { optedOut: true });
    expect(rest.body).toMatchObject({ name: 'Keep', phone: '+14155550111', timeZone: 'America/New_York', optedOut: true });
    const { updateContact } = await acme.graphql.ok(UpdateContactDocument, { id: created.id, input: { timeZone: null, attributes: { a: 1 } } });
    expect(updateContact).toMatchObject({ name: 'Keep', timeZone: null, attributes: { a: 1 }, optedOut: true });
  });

  it('a phone already in the organization → 409 CONFLICT on both doors', async () => {
    await acme.rest.post('/api/contacts', { phone: '+14155550122' });
    const rest = await acme.rest.post('/api/contacts', { phone: '+14155550122' });
    expect(rest.status).toBe(409);
    const gql = await acme.graphql.run(CreateContactDocument, { input: { phone: '+14155550122' } });
    expect(gql.errors?.[0]?.extensions.code).toBe('CONFLICT');
    // Another organization may hold the same number.
    const other = await app.organization('Same number');
    expect((await other.rest.post('/api/contacts', { phone: '+14155550122' })).status).toBe(201);
  });

  const badContacts: [string, Record<string, unknown>, string][] = [
    ['a phone without +', { phone: '14155550100' }, 'phone'],
    ['a phone that is too short', { phone: '+12345' }, 'phone'],
    ['a phone with letters', { phone: '+1415555CALL' }, 'phone'],
    ['an unknown time zone', { phone: '+14155550100', timeZone: 'Mars/Olympus' }, 'timeZone'],
    ['an offset instead of a zone', { phone: '+14155550100', timeZone: '+01:00' }, 'timeZone'],
    ['a name of 256 characters', { phone: '+14155550100', name: 'n'.repeat(256) }, 'name'],
    ['attributes that are not an object', { phone: '+14155550100', attributes: null }, 'attributes'],
  ];

  it.each(badContacts)('%s → 400 naming the field on both doors', async (_label, input, field) => {
    const rest = await acme.rest.post('/api/contacts', input);
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe('BAD_USER_INPUT');
    expect(fieldsOf(rest.body.errors)).toEqual([field]);
    const gql = await acme.graphql.run(CreateContactDocument, { input: input as never });
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual([field]);
  });

  it('an invalid phone or time zone on update → 400 naming the field on both doors', async () => {
    const { body: created } = await acme.rest.post('/api/contacts', { phone: '+14155550133' });
    for (const [input, field] of [[{ phone: 'nope' }, 'phone'], [{ timeZone: 'Nowhere/City' }, 'timeZone']] as const) {
      const rest = await acme.rest.put(`/api/contacts/${created.id}`, input);
      expect(rest.status).toBe(400);
      expect(fieldsOf(rest.body.errors)).toEqual([field]);
      const gql = await acme.graphql.run(UpdateContactDocument, { id: created.id, input });
      expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual([field]);
    }
  });
});

describe('the contact list', () => {
  it('pages, searches name or phone, and sorts, on both doors', async () => {
    const org = await app.organization('Listing');
    const { status } = await org.rest.post('/api/contacts/import', {
      contacts: [
        { name: 'Zoe', phone: '+14155550001' },
        { name: 'Adam', phone: '+14155550002' },
        { name: 'Maria', phone: '+4930123456' },
      ],
    });
    expect(status).toBe(201);
    const page = await org.rest.get('/api/contacts?limit=2&page=2&sortBy=name&sortOrder=asc');
    expect(Object.keys(page.body).sort()).toEqual(['data', 'meta']);
    expect(page.body.meta).toEqual({ page: 2, limit: 2, total: 3, totalPages: 2, hasNextPage: false, hasPreviousPage: true });
    expect(page.body.data.map((contact: { name: string }) => contact.name)).toEqual(['Zoe']);
    const byPhone = await org.rest.get('/api/contacts?search=%2B49');
    expect(byPhone.body.data.map((contact: { name: string }) => contact.name)).toEqual(['Maria']);
    const { contacts } = await org.graphql.ok(ContactsDocument, { search: 'aDAM' });
    expect(contacts.data.map((contact) => contact.phone)).toEqual(['+14155550002']);
    const bad = await org.rest.get('/api/contacts?sortBy=contactCount');
    expect(bad.status).toBe(400);
    expect(fieldsOf(bad.body.errors)).toEqual(['sortBy']);
  });
});

describe('bulk import', () => {
  it('writes 10,000 valid rows in one call', async () => {
    const org = await app.organization('Bulk');
    const contacts = Array.from({ length: 10_000 }, (_, i) => ({ phone: phone(i), attributes: { n: i } }));
    const started = Date.now();
    const res = await org.rest.post('/api/contacts/import', { contacts });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ imported: 10_000 });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await countContacts(org)).toBe(10_000);
    const listed = await org.rest.get('/api/contacts?limit=1');
    expect(listed.body.meta.total).toBe(10_000);
  }, 30_000);

  it('one bad row among many → 400 naming contacts.<i>.phone, and nothing is written (both doors)', async () => {
    const org = await app.organization('Bad row');
    const contacts = Array.from({ length: 500 }, (_, i) => ({ phone: phone(i) }));
    contacts[137] = { phone: 'not-a-phone' };
    const rest = await org.rest.post('/api/contacts/import', { contacts });
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe('BAD_USER_INPUT');
    expect(fieldsOf(rest.body.errors)).toEqual(['contacts.137.phone']);
    const gql = await org.graphql.run(ImportContactsDocument, { input: { contacts } });
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual(['contacts.137.phone']);
    expect(await countContacts(org)).toBe(0);
  });

  it('names every bad row and field, and refuses a repeated phone within the file', async () => {
    const org = await app.organization('Many bad rows');
    const rest = await org.rest.post('/api/contacts/import', {
      contacts: [{ phone: phone(1) }, { phone: phone(2), timeZone: 'Bad/Zone' }, { phone: 5 }],
    });
    expect(fieldsOf(rest.body.errors)).toEqual(['contacts.1.timeZone', 'contacts.2.phone']);
    const repeated = await org.rest.post('/api/contacts/import', { contacts: [{ phone: phone(1) }, { phone: phone(2) }, { phone: phone(1) }] });
    expect(repeated.status).toBe(400);
    expect(fieldsOf(repeated.body.errors)).toEqual(['contacts.2.phone']);
    expect(await countContacts(org)).toBe(0);
  });

  it('a phone already in the organization → 409 naming the row, nothing written; GraphQL imports too', async () => {
    const org = await app.organization('Existing');
    const { importContacts } = await org.graphql.ok(ImportContactsDocument, { input: { contacts: [{ phone: phone(1), name: 'One' }] } });
    expect(importContacts.imported).toBe(1);
    const res = await org.rest.post('/api/contacts/import', { contacts: [{ phone: phone(2) }, { phone: phone(1) }] });
    expect(res.status).toBe(409);
    expect(fieldsOf(res.body.errors)).toEqual(['contacts.1.phone']);
    expect(await countContacts(org)).toBe(1);
  });

  it('refuses an empty file and more than 10,000 rows', async () => {
    const empty = await acme.rest.post('/api/contacts/import', { contacts: [] });
    expect(empty.status).toBe(400);
    expect(fieldsOf(empty.body.errors)).toEqual(['contacts']);
    const gql = await acme.graphql.run(ImportContactsDocument, { input: { contacts: [] } });
    expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual(['contacts']);
    const tooMany = await acme.rest.post('/api/contacts/import', { contacts: Array.from({ length: 10_001 }, () => ({ phone: '+1' })) });
    expect(tooMany.status).toBe(400);
    expect(fieldsOf(tooMany.body.errors)).toEqual(['contacts']);
  });
});
