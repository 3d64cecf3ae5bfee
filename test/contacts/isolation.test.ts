import {
  AddAudienceMembersDocument,
  AudienceDocument,
  AudiencesDocument,
  ContactDocument,
  ContactsDocument,
  DeleteAudienceDocument,
  DeleteContactDocument,
  RemoveAudienceMembersDocument,
  UpdateAudienceDocument,
  UpdateContactDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let audienceId: string;
let contactId: string;
let otherAudienceId: string;
let otherContactId: string;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  other = await app.organization('Other');
  audienceId = (await acme.rest.post('/api/audience', { name: 'Acme secret audience' })).body.id;
  contactId = (await acme.rest.post('/api/contacts', { name: 'Acme secret contact', phone: '+14155550100' })).body.id;
  await acme.rest.post(`/api/audience/${audienceId}/members`, { contactIds: [contactId] });
  otherAudienceId = (await other.rest.post('/api/audience', { name: 'Other audience' })).body.id;
  otherContactId = (await other.rest.post('/api/contacts', { name: 'Other contact', phone: '+14155550101' })).body.id;
});
afterAll(() => app.close());

describe('another organization', () => {
  it('gets 404 NOT_FOUND on every audience and contact id route over REST', async () => {
    const members = { contactIds: [otherContactId] };
    const responses = [
      await other.rest.get(`/api/audience/${audienceId}`),
      await other.rest.put(`/api/audience/${audienceId}`, { name: 'stolen' }),
      await other.rest.post(`/api/audience/${audienceId}/members`, members),
      await other.rest.request('DELETE', `/api/audience/${audienceId}/members`, members),
      await other.rest.delete(`/api/audience/${audienceId}`),
      await other.rest.get(`/api/contacts/${contactId}`),
      await other.rest.put(`/api/contacts/${contactId}`, { name: 'stolen' }),
      await other.rest.delete(`/api/contacts/${contactId}`),
    ];
    for (const res of responses) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    expect((await acme.rest.get(`/api/audience/${audienceId}`)).body).toMatchObject({ name: 'Acme secret audience', contactCount: 1 });
    expect((await acme.rest.get(`/api/contacts/${contactId}`)).body.name).toBe('Acme secret contact');
  });

  it('gets NOT_FOUND on every operation over GraphQL', async () => {
    const runs = [
      await other.graphql.run(AudienceDocument, { id: audienceId }),
      await other.graphql.run(UpdateAudienceDocument, { id: audienceId, input: { name: 'stolen' } }),
      await other.graphql.run(AddAudienceMembersDocument, { audienceId: audienceId, contactIds: [otherContactId] }),
      await other.graphql.run(RemoveAudienceMembersDocument, { audienceId: audienceId, contactIds: [otherContactId] }),
      await other.graphql.run(DeleteAudienceDocument, { id: audienceId }),
      await other.graphql.run(ContactDocument, { id: contactId }),
      await other.graphql.run(UpdateContactDocument, { id: contactId, input: { name: 'stolen' } }),
      await other.graphql.run(DeleteContactDocument, { id: contactId }),
    ];
    for (const run of runs) expect(run.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await acme.rest.get(`/api/audience/${audienceId}`)).body.contactCount).toBe(1);
  });

  it("cannot add or remove the first organization's contact in its own audience (404, nothing changes)", async () => {
    const rest = await other.rest.post(`/api/audience/${otherAudienceId}/members`, { contactIds: [otherContactId, contactId] });
    expect(rest.status).toBe(404);
    const gql = await other.graphql.run(AddAudienceMembersDocument, { audienceId: otherAudienceId, contactIds: [contactId] });
    expect(gql.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    const removal = await other.rest.request('DELETE', `/api/audience/${otherAudienceId}/members`, { contactIds: [contactId] });
    expect(removal.status).toBe(404);
    expect((await other.rest.get(`/api/audience/${otherAudienceId}`)).body.contactCount).toBe(0);
    const rows = await app.sql('select count(*)::int as n from audience_members where contact_id = ?', [contactId]);
    expect(rows[0]!.n).toBe(1);
  });

  it('never sees the first organization in its lists, on either door', async () => {
    const audiences = await other.rest.get('/api/audience?limit=100');
    expect(audiences.body.data.map((audience: { id: string }) => audience.id)).toEqual([otherAudienceId]);
    expect(audiences.body.meta.total).toBe(1);
    const contacts = await other.rest.get('/api/contacts?search=Acme');
    expect(contacts.body.meta.total).toBe(0);
    const { audiences: viaGraphql } = await other.graphql.ok(AudiencesDocument, { search: 'secret' });
    expect(viaGraphql.data).toEqual([]);
    const { contacts: contactsViaGraphql } = await other.graphql.ok(ContactsDocument, {});
    expect(contactsViaGraphql.data.map((contact) => contact.id)).toEqual([otherContactId]);
  });

  it('a malformed id is 404 too, not a database error', async () => {
    expect((await acme.rest.get('/api/audience/not-a-uuid')).status).toBe(404);
    expect((await acme.rest.get('/api/contacts/not-a-uuid')).status).toBe(404);
    const gql = await acme.graphql.run(AudienceDocument, { id: 'not-a-uuid' });
    expect(gql.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });
});
