import {
  AddAudienceMembersDocument,
  AudienceDocument,
  AudiencesDocument,
  AudiencesWithMembersDocument,
  CreateAudienceDocument,
  RemoveAudienceMembersDocument,
  UpdateAudienceDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

const AUDIENCE_KEYS = ['contactCount', 'createdAt', 'description', 'id', 'name', 'organizationId', 'updatedAt'];
const fieldsOf = (errors: { field: string }[] | undefined) => [...new Set((errors ?? []).map((error) => error.field))].sort();

async function createContacts(org: TestOrganization, count: number, start = 0): Promise<string[]> {
  const ids: string[] = [];
  for (let i = start; i < start + count; i++) {
    const res = await org.rest.post('/api/contacts', { name: `Person ${i}`, phone: `+1415555${String(i).padStart(4, '0')}` });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  return ids;
}

describe('the audience list (endpoint 10)', () => {
  let paging: TestOrganization;
  beforeAll(async () => {
    paging = await app.organization('Paging');
    for (let i = 1; i <= 45; i++) {
      const res = await paging.rest.post('/api/audience', { name: `Segment ${String(i).padStart(2, '0')}` });
      expect(res.status).toBe(201);
    }
  });

  it('answers exactly {data, meta} with page 2 of 3 on REST', async () => {
    const res = await paging.rest.get('/api/audience?page=2&limit=20');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'meta']);
    expect(res.body.meta).toEqual({ page: 2, limit: 20, total: 45, totalPages: 3, hasNextPage: true, hasPreviousPage: true });
    expect(res.body.data).toHaveLength(20);
    expect(Object.keys(res.body.data[0]).sort()).toEqual(AUDIENCE_KEYS);
    expect(res.body.data[0]).toMatchObject({ organizationId: paging.organizationId, contactCount: 0, description: null });
    // Newest first by default: page 2 starts at the 21st newest, Segment 25.
    expect(res.body.data[0].name).toBe('Segment 25');
  });

  it('gives the same page on GraphQL, and the last page knows it is last', async () => {
    const rest = await paging.rest.get('/api/audience?page=2&limit=20');
    const { audiences } = await paging.graphql.ok(AudiencesDocument, { page: 2, limit: 20 });
    expect(audiences.meta).toEqual(rest.body.meta);
    expect(audiences.data.map((audience) => audience.id)).toEqual(rest.body.data.map((audience: { id: string }) => audience.id));
    const last = await paging.rest.get('/api/audience?page=3&limit=20');
    expect(last.body.data).toHaveLength(5);
    expect(last.body.meta).toEqual({ page: 3, limit: 20, total: 45, totalPages: 3, hasNextPage: false, hasPreviousPage: true });
    const defaults = await paging.rest.get('/api/audience');
    expect(defaults.body.meta).toMatchObject({ page: 1, limit: 20, hasPreviousPage: false, hasNextPage: true });
  });

  it('sorts by name both ways on both doors', async () => {
    const asc = await paging.rest.get('/api/audience?sortBy=name&sortOrder=asc&limit=3');
    expect(asc.body.data.map((audience: { name: string }) => audience.name)).toEqual(['Segment 01', 'Segment 02', 'Segment 03']);
    const { audiences } = await paging.graphql.ok(AudiencesDocument, { sortBy: 'name', sortOrder: 'desc', limit: 2 });
    expect(audiences.data.map((audience) => audience.name)).toEqual(['Segment 45', 'Segment 44']);
  });

  const badParameters: [string, Record<string, unknown>, string][] = [
    ['page=0', { page: 0 }, 'page'],
    ['limit=0', { limit: 0 }, 'limit'],
    ['limit=101', { limit: 101 }, 'limit'],
    ['page=abc', { page: 'abc' }, 'page'],
    ['limit=abc', { limit: 'abc' }, 'limit'],
    ['sortOrder=sideways', { sortOrder: 'sideways' }, 'sortOrder'],
    ['sortBy=sideways', { sortBy: 'sideways' }, 'sortBy'],
    [`search of 101 characters`, { search: 's'.repeat(101) }, 'search'],
  ];

  it.each(badParameters)('%s → 400 BAD_USER_INPUT naming the parameter on both doors', async (_label, parameters, field) => {
    const query = new URLSearchParams(Object.entries(parameters).map(([key, value]): [string, string] => [key, String(value)]));
    const rest = await paging.rest.get(`/api/audience?${query}`);
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe('BAD_USER_INPUT');
    expect(fieldsOf(rest.body.errors)).toEqual([field]);
    const gql = await paging.graphql.run(AudiencesDocument, parameters as never);
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual([field]);
  });

  it('refuses a status filter: the audience list has none', async () => {
    const rest = await paging.rest.get('/api/audience?status=active');
    expect(rest.status).toBe(400);
    expect(fieldsOf(rest.body.errors)).toEqual(['status']);
  });
});

describe('search', () => {
  let searching: TestOrganization;
  beforeAll(async () => {
    searching = await app.organization('Search');
    for (const [name, description] of [
      ['Gold customers', null],
      ['Lapsed', 'former GOLD tier'],
      ['Promo 100% off', 'discount_hunters'],
      ['Plain', 'nothing special'],
    ]) {
      expect((await searching.rest.post('/api/audience', { name, description })).status).toBe(201);
    }
  });

  const names = (data: { name: string }[]) => data.map((audience) => audience.name).sort();

  it('matches name and description case-insensitively on both doors', async () => {
    const rest = await searching.rest.get('/api/audience?search=gold');
    expect(names(rest.body.data)).toEqual(['Gold customers', 'Lapsed']);
    expect(rest.body.meta.total).toBe(2);
    const { audiences } = await searching.graphql.ok(AudiencesDocument, { search: 'GoLd' });
    expect(names(audiences.data)).toEqual(['Gold customers', 'Lapsed']);
  });

  it('takes % and _ literally', async () => {
    expect(names((await searching.rest.get('/api/audience?search=%25')).body.data)).toEqual(['Promo 100% off']);
    expect(names((await searching.rest.get('/api/audience?search=_')).body.data)).toEqual(['Promo 100% off']);
    expect((await searching.rest.get('/api/audience?search=zzz')).body.meta).toMatchObject({ total: 0, totalPages: 0, hasNextPage: false });
  });
});

describe('contactCount', () => {
  it('follows adds, removes and contact deletion, on both doors', async () => {
    const [a, b, c] = await createContacts(acme, 3);
    const { body: audience } = await acme.rest.post('/api/audience', { name: 'Members', description: 'count me' });
    expect(audience.contactCount).toBe(0);

    const added = await acme.rest.post(`/api/audience/${audience.id}/members`, { contactIds: [a, b] });
    expect(added.status).toBe(200);
    expect(added.body.contactCount).toBe(2);
    const { addAudienceMembers } = await acme.graphql.ok(AddAudienceMembersDocument, { audienceId: audience.id, contactIds: [b!, c!, c!] });
    expect(addAudienceMembers.contactCount).toBe(3);

    const removed = await acme.rest.request('DELETE', `/api/audience/${audience.id}/members`, { contactIds: [a] });
    expect([removed.status, removed.body]).toEqual([204, undefined]);
    expect((await acme.rest.get(`/api/audience/${audience.id}`)).body.contactCount).toBe(2);
    expect((await acme.rest.delete(`/api/contacts/${b}`)).status).toBe(204);
    expect((await acme.rest.get(`/api/audience/${audience.id}`)).body.contactCount).toBe(1);
    const { audience: viaGraphql } = await acme.graphql.ok(AudienceDocument, { id: audience.id });
    expect(viaGraphql.contactCount).toBe(1);
    const listed = await acme.rest.get('/api/audience?search=Members');
    expect(listed.body.data[0].contactCount).toBe(1);
    const { removeAudienceMembers } = await acme.graphql.ok(RemoveAudienceMembersDocument, { audienceId: audience.id, contactIds: [c!] });
    expect(removeAudienceMembers.contactCount).toBe(0);
    const rows = await app.sql('select count(*)::int as n from audience_members where audience_id = ?', [audience.id]);
    expect(rows[0]!.n).toBe(0);
  });

  it('sorts by contactCount, and Audience.contacts pages the members in GraphQL', async () => {
    const org = await app.organization('Counting');
    const ids = await createContacts(org, 3);
    const made: Record<string, string> = {};
    for (const [name, members] of [['One', 1], ['Three', 3], ['None', 0]] as const) {
      const { createAudience } = await org.graphql.ok(CreateAudienceDocument, { input: { name } });
      made[name] = createAudience.id;
      if (members) await org.graphql.ok(AddAudienceMembersDocument, { audienceId: createAudience.id, contactIds: ids.slice(0, members) });
    }
    const rest = await org.rest.get('/api/audience?sortBy=contactCount&sortOrder=desc');
    expect(rest.body.data.map((audience: { name: string; contactCount: number }) => [audience.name, audience.contactCount])).toEqual([
      ['Three', 3],
      ['One', 1],
      ['None', 0],
    ]);
    const { audiences } = await org.graphql.ok(AudiencesWithMembersDocument, { limit: 10 });
    const three = audiences.data.find((audience) => audience.name === 'Three')!;
    expect(three.contacts.data.map((contact) => contact.phone)).toEqual(['+14155550000', '+14155550001']);
    expect(three.contacts.meta).toMatchObject({ total: 3, totalPages: 2, hasNextPage: true });
    expect(audiences.data.find((audience) => audience.name === 'None')!.contacts.meta.total).toBe(0);
  });

  it('an update changes only the fields sent and moves updatedAt', async () => {
    const { body: created } = await acme.rest.post('/api/audience', { name: 'Before', description: 'keep' });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const rest = await acme.rest.put(`/api/audience/${created.id}`, { name: 'After' });
    expect(rest.body).toMatchObject({ name: 'After', description: 'keep' });
    expect(Date.parse(rest.body.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));
    const { updateAudience } = await acme.graphql.ok(UpdateAudienceDocument, { id: created.id, input: { description: null } });
    expect(updateAudience).toMatchObject({ name: 'After', description: null });
  });

  it('validates audience bodies the same on both doors', async () => {
    for (const [input, field] of [
      [{ name: '' }, 'name'],
      [{ name: 'x', description: 'd'.repeat(2001) }, 'description'],
    ] as const) {
      const rest = await acme.rest.post('/api/audience', input);
      expect(rest.status).toBe(400);
      expect(fieldsOf(rest.body.errors)).toEqual([field]);
      const gql = await acme.graphql.run(CreateAudienceDocument, { input });
      expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual([field]);
    }
    const { body: audience } = await acme.rest.post('/api/audience', { name: 'Limits' });
    const tooMany = Array.from({ length: 1001 }, () => '00000000-0000-4000-8000-000000000000');
    const rest = await acme.rest.post(`/api/audience/${audience.id}/members`, { contactIds: tooMany });
    expect(rest.status).toBe(400);
    expect(fieldsOf(rest.body.errors)).toEqual(['contactIds']);
    const gql = await acme.graphql.run(AddAudienceMembersDocument, { audienceId: audience.id, contactIds: tooMany });
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual(['contactIds']);
  });

  it('deleting an audience answers 204 and keeps its contacts', async () => {
    const [contact] = await createContacts(acme, 1, 100);
    const { body: audience } = await acme.rest.post('/api/audience', { name: 'Doomed' });
    await acme.rest.post(`/api/audience/${audience.id}/members`, { contactIds: [contact] });
    const res = await acme.rest.delete(`/api/audience/${audience.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect((await acme.rest.get(`/api/audience/${audience.id}`)).status).toBe(404);
    expect((await acme.rest.get(`/api/contacts/${contact}`)).status).toBe(200);
  });
});
