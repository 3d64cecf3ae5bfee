import {
  AddTeamMemberDocument,
  BusinessEntitiesDocument,
  BusinessEntityDocument,
  CreateBusinessEntityDocument,
  DeleteBusinessEntityDocument,
  DeleteTeamDocument,
  OrganizationDocument,
  RemoveTeamMemberDocument,
  TeamDocument,
  TeamsDocument,
  UpdateBusinessEntityDocument,
  UpdateTeamDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let teamId: string;
let contactId: string;
let entityId: string;
let otherTeamId: string;
let otherContactId: string;
let otherEntityId: string;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  other = await app.organization('Other');
  teamId = (await acme.rest.post('/api/teams', { name: 'Acme secret team' })).body.id;
  await acme.rest.post(`/api/teams/${teamId}/members`, { userId: acme.userId });
  contactId = (await acme.rest.post('/api/contacts', { phone: '+14155550100' })).body.id;
  entityId = (await acme.rest.post('/api/business-entities', { contactId, type: 'invoice', name: 'Acme secret invoice' })).body.id;
  otherTeamId = (await other.rest.post('/api/teams', { name: 'Other team' })).body.id;
  otherContactId = (await other.rest.post('/api/contacts', { phone: '+14155550101' })).body.id;
  otherEntityId = (await other.rest.post('/api/business-entities', { contactId: otherContactId, type: 'invoice', name: 'Other invoice' })).body.id;
});
afterAll(() => app.close());

describe('another organization', () => {
  it('gets 404 NOT_FOUND on every team and entity id route over REST', async () => {
    const responses = [
      await other.rest.get(`/api/teams/${teamId}`),
      await other.rest.put(`/api/teams/${teamId}`, { name: 'stolen' }),
      await other.rest.post(`/api/teams/${teamId}/members`, { userId: other.userId }),
      await other.rest.delete(`/api/teams/${teamId}/members/${acme.userId}`),
      await other.rest.delete(`/api/teams/${teamId}`),
      await other.rest.post(`/api/teams/${otherTeamId}/members`, { userId: acme.userId }),
      await other.rest.get(`/api/business-entities/${entityId}`),
      await other.rest.put(`/api/business-entities/${entityId}`, { name: 'stolen' }),
      await other.rest.delete(`/api/business-entities/${entityId}`),
      await other.rest.post('/api/business-entities', { contactId, type: 'invoice', name: 'planted' }),
      await other.rest.put(`/api/business-entities/${otherEntityId}`, { contactId }),
      await other.rest.get(`/api/business-entities?contactId=${contactId}`),
    ];
    for (const res of responses) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    expect((await acme.rest.get(`/api/teams/${teamId}`)).body).toMatchObject({ name: 'Acme secret team', members: [{ user: { id: acme.userId } }] });
    expect((await acme.rest.get(`/api/business-entities/${entityId}`)).body).toMatchObject({ name: 'Acme secret invoice', contactId });
    expect((await other.rest.get(`/api/business-entities/${otherEntityId}`)).body.contactId).toBe(otherContactId);
  });

  it('gets NOT_FOUND on every operation over GraphQL', async () => {
    const runs = [
      await other.graphql.run(TeamDocument, { id: teamId }),
      await other.graphql.run(UpdateTeamDocument, { id: teamId, input: { name: 'stolen' } }),
      await other.graphql.run(AddTeamMemberDocument, { teamId, userId: other.userId }),
      await other.graphql.run(RemoveTeamMemberDocument, { teamId, userId: acme.userId }),
      await other.graphql.run(DeleteTeamDocument, { id: teamId }),
      await other.graphql.run(AddTeamMemberDocument, { teamId: otherTeamId, userId: acme.userId }),
      await other.graphql.run(BusinessEntityDocument, { id: entityId }),
      await other.graphql.run(UpdateBusinessEntityDocument, { id: entityId, input: { name: 'stolen' } }),
      await other.graphql.run(DeleteBusinessEntityDocument, { id: entityId }),
      await other.graphql.run(CreateBusinessEntityDocument, { input: { contactId, type: 'invoice', name: 'planted' } }),
      await other.graphql.run(UpdateBusinessEntityDocument, { id: otherEntityId, input: { contactId } }),
      await other.graphql.run(BusinessEntitiesDocument, { contactId }),
    ];
    for (const run of runs) expect(run.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    const rows = await app.sql<{ n: number }>("select count(*)::int as n from business_entities where name in ('planted', 'stolen')");
    expect(rows[0]!.n).toBe(0);
    expect((await other.rest.get(`/api/teams/${otherTeamId}`)).body.members).toEqual([]);
  });

  it('never sees the first organization in its lists or as its organization, on either door', async () => {
    expect((await other.rest.get('/api/teams')).body.data.map((team: { id: string }) => team.id)).toEqual([otherTeamId]);
    const { teams } = await other.graphql.ok(TeamsDocument);
    expect(teams.data.map((team) => team.id)).toEqual([otherTeamId]);
    const entities = await other.rest.get('/api/business-entities?search=secret');
    expect(entities.body.meta.total).toBe(0);
    const { businessEntities } = await other.graphql.ok(BusinessEntitiesDocument, {});
    expect(businessEntities.data.map((entity) => entity.id)).toEqual([otherEntityId]);
    const { organization } = await other.graphql.ok(OrganizationDocument);
    expect(organization.id).toBe(other.organizationId);
  });

  it('a malformed id is 404 too, not a database error', async () => {
    expect((await acme.rest.get('/api/teams/not-a-uuid')).status).toBe(404);
    expect((await acme.rest.get('/api/business-entities/not-a-uuid')).status).toBe(404);
    expect((await acme.rest.get('/api/business-entities?contactId=not-a-uuid')).status).toBe(404);
    const gql = await acme.graphql.run(TeamDocument, { id: 'not-a-uuid' });
    expect(gql.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });
});
