import {
  BusinessEntitiesDocument,
  BusinessEntityDocument,
  ContactsWithEntitiesDocument,
  CreateBusinessEntityDocument,
  DeleteBusinessEntityDocument,
  UpdateBusinessEntityDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { recordStatements } from '../helpers/users.js';

let app: TestApp;
let acme: TestOrganization;
let contactId: string;
let secondContactId: string;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  contactId = (await acme.rest.post('/api/contacts', { name: 'Ada', phone: '+14155550100' })).body.id;
  secondContactId = (await acme.rest.post('/api/contacts', { name: 'Bob', phone: '+14155550101' })).body.id;
});
afterAll(() => app.close());

const fieldsOf = (errors: { field: string }[] | undefined) => [...new Set((errors ?? []).map((error) => error.field))].sort();

describe('a business entity', () => {
  it('is created, read, updated and deleted on both doors, the same shape on each', async () => {
    const input = { contactId, type: 'appointment', name: 'Dental check-up', attributes: { startsAt: '2026-05-01T09:00:00Z', room: 3 } };
    const rest = await acme.rest.post('/api/business-entities', input);
    expect(rest.status).toBe(201);
    expect(rest.body).toEqual({
      id: expect.any(String),
      organizationId: acme.organizationId,
      ...input,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const { businessEntity } = await acme.graphql.ok(BusinessEntityDocument, { id: rest.body.id });
    expect(businessEntity).toEqual(rest.body);

    const { createBusinessEntity } = await acme.graphql.ok(CreateBusinessEntityDocument, { input: { contactId, type: 'invoice', name: 'INV-1' } });
    expect(createBusinessEntity).toMatchObject({ contactId, type: 'invoice', name: 'INV-1', attributes: {} });

    const updated = await acme.rest.put(`/api/business-entities/${rest.body.id}`, { name: 'Cleaning' });
    expect(updated.body).toMatchObject({ name: 'Cleaning', type: 'appointment', attributes: input.attributes });
    const { updateBusinessEntity } = await acme.graphql.ok(UpdateBusinessEntityDocument, {
      id: createBusinessEntity.id,
      input: { contactId: secondContactId, attributes: { dueOn: '2026-06-30' } },
    });
    expect(updateBusinessEntity).toMatchObject({ contactId: secondContactId, name: 'INV-1', attributes: { dueOn: '2026-06-30' } });

    expect((await acme.rest.delete(`/api/business-entities/${rest.body.id}`)).status).toBe(204);
    expect((await acme.rest.get(`/api/business-entities/${rest.body.id}`)).status).toBe(404);
    const { deleteBusinessEntity } = await acme.graphql.ok(DeleteBusinessEntityDocument, { id: createBusinessEntity.id });
    expect(deleteBusinessEntity.id).toBe(createBusinessEntity.id);
    const gone = await acme.graphql.run(BusinessEntityDocument, { id: createBusinessEntity.id });
    expect(gone.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });

  it('goes away with its contact', async () => {
    const { body: contact } = await acme.rest.post('/api/contacts', { phone: '+14155550177' });
    const { body: entity } = await acme.rest.post('/api/business-entities', { contactId: contact.id, type: 'invoice', name: 'INV-9' });
    await acme.rest.delete(`/api/contacts/${contact.id}`);
    expect((await acme.rest.get(`/api/business-entities/${entity.id}`)).status).toBe(404);
  });

  const bad: [string, Record<string, unknown>, string][] = [
    ['an empty type', { contactId: '', type: '', name: 'x' }, 'type'],
    ['a type of 65 characters', { type: 't'.repeat(65), name: 'x' }, 'type'],
    ['an empty name', { type: 'invoice', name: '' }, 'name'],
    ['a name of 256 characters', { type: 'invoice', name: 'n'.repeat(256) }, 'name'],
    ['attributes that are not an object', { type: 'invoice', name: 'x', attributes: null }, 'attributes'],
  ];

  it.each(bad)('%s → 400 naming the field on both doors', async (_label, input, field) => {
    const body = { contactId, ...input };
    const rest = await acme.rest.post('/api/business-entities', body);
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe('BAD_USER_INPUT');
    expect(fieldsOf(rest.body.errors)).toEqual([field]);
    const gql = await acme.graphql.run(CreateBusinessEntityDocument, { input: body as never });
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual([field]);
  });

  it('a missing contact id → 404 NOT_FOUND on both doors, nothing written', async () => {
    for (const missing of ['not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      const rest = await acme.rest.post('/api/business-entities', { contactId: missing, type: 'invoice', name: 'x' });
      expect(rest.status).toBe(404);
      const gql = await acme.graphql.run(CreateBusinessEntityDocument, { input: { contactId: missing, type: 'invoice', name: 'x' } });
      expect(gql.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    }
    const rows = await app.sql<{ n: number }>("select count(*)::int as n from business_entities where name = 'x'");
    expect(rows[0]!.n).toBe(0);
  });
});

describe('the entity list', () => {
  let org: TestOrganization;
  let first: string;
  let second: string;

  beforeAll(async () => {
    org = await app.organization('Lists');
    first = (await org.rest.post('/api/contacts', { phone: '+33612345670' })).body.id;
    second = (await org.rest.post('/api/contacts', { phone: '+33612345671' })).body.id;
    for (const [contact, type, name] of [
      [first, 'appointment', 'Alpha visit'],
      [first, 'invoice', 'Bravo bill'],
      [second, 'appointment', 'Charlie visit'],
      [second, 'appointment', 'Delta 100%'],
    ] as const) {
      await org.rest.post('/api/business-entities', { contactId: contact, type, name });
    }
  });

  it('pages, filters by contact and type, searches and sorts the same on both doors', async () => {
    const rest = await org.rest.get(`/api/business-entities?contactId=${second}&type=appointment&sortBy=name&sortOrder=asc&limit=1`);
    expect(rest.status).toBe(200);
    expect(rest.body.data.map((e: { name: string }) => e.name)).toEqual(['Charlie visit']);
    expect(rest.body.meta).toEqual({ page: 1, limit: 1, total: 2, totalPages: 2, hasNextPage: true, hasPreviousPage: false });
    const { businessEntities } = await org.graphql.ok(BusinessEntitiesDocument, {
      contactId: second,
      type: 'appointment',
      sortBy: 'name',
      sortOrder: 'asc',
      limit: 1,
    });
    expect(businessEntities).toEqual(rest.body);

    const types = await org.rest.get('/api/business-entities?type=appointment&sortBy=name&sortOrder=desc');
    expect(types.body.data.map((e: { name: string }) => e.name)).toEqual(['Delta 100%', 'Charlie visit', 'Alpha visit']);
    const search = await org.rest.get(`/api/business-entities?search=${encodeURIComponent('100%')}`);
    expect(search.body.data.map((e: { name: string }) => e.name)).toEqual(['Delta 100%']);
    const { businessEntities: invoices } = await org.graphql.ok(BusinessEntitiesDocument, { search: 'INVOICE' });
    expect(invoices.data.map((e) => e.name)).toEqual(['Bravo bill']);
  });

  it('a sortBy not in the allow-list or a bad limit → 400 naming it on both doors', async () => {
    for (const [query, variables, field] of [
      ['sortBy=attributes', { sortBy: 'attributes' }, 'sortBy'],
      ['limit=101', { limit: 101 }, 'limit'],
    ] as const) {
      const rest = await org.rest.get(`/api/business-entities?${query}`);
      expect(rest.status).toBe(400);
      expect(fieldsOf(rest.body.errors)).toEqual([field]);
      const gql = await org.graphql.run(BusinessEntitiesDocument, variables);
      expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual([field]);
    }
  });

  it('Contact.entities lists each contact’s records, filtered by type, in one statement for all contacts', async () => {
    const statements = await recordStatements(app, async () => {
      const { contacts } = await org.graphql.ok(ContactsWithEntitiesDocument, {});
      expect(contacts.data.map((contact) => [contact.id, contact.entities.map((e) => e.name)])).toEqual([
        [first, ['Alpha visit', 'Bravo bill']],
        [second, ['Charlie visit', 'Delta 100%']],
      ]);
    });
    expect(statements.filter((sql) => /from "business_entities"/.test(sql))).toHaveLength(1);
    const { contacts } = await org.graphql.ok(ContactsWithEntitiesDocument, { type: 'invoice' });
    expect(contacts.data.map((contact) => contact.entities.map((e) => e.name))).toEqual([['Bravo bill'], []]);
    // The REST contact keeps its own shape; records are listed at /api/entities.
    expect((await org.rest.get(`/api/contacts/${first}`)).body).not.toHaveProperty('entities');
  });
});
