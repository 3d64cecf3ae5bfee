import {
  AddAudienceMembersDocument,
  AudienceDocument,
  AudiencesDocument,
  AudiencesWithMembersDocument,
  ContactDocument,
  ContactsDocument,
  CreateAudienceDocument,
  CreateContactDocument,
  DeleteAudienceDocument,
  DeleteContactDocument,
  ImportContactsDocument,
  RemoveAudienceMembersDocument,
  UpdateAudienceDocument,
  UpdateContactDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { withCursors } from '../helpers/pages.js';

// Contacts: contacts, audiences and isolation, one describe each (they were one file each), each on an app and a database of its own.
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('contacts', () => {
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

    it('a phone already in the organization → 409 CONFLICT on both doors, naming the field and the contact that has it', async () => {
      const first = await acme.rest.post('/api/contacts', { phone: '+14155550122' });
      const rest = await acme.rest.post('/api/contacts', { phone: '+14155550122' });
      expect(rest.status).toBe(409);
      const message = `A contact with phone +14155550122 already exists: ${first.body.id}`;
      expect([rest.body.code, rest.body.detail, rest.body.errors]).toEqual(['CONFLICT', message, [{ field: 'phone', message }]]);
      const gql = await acme.graphql.run(CreateContactDocument, { input: { phone: '+14155550122' } });
      expect(gql.errors?.[0]?.extensions.code).toBe('CONFLICT');
      expect([gql.errors?.[0]?.message, gql.errors?.[0]?.extensions.errors]).toEqual([message, [{ field: 'phone', message }]]);
      // Moving another contact onto the number is the same refusal, on both doors.
      const { body: second } = await acme.rest.post('/api/contacts', { phone: '+14155550123' });
      const moved = await acme.rest.put(`/api/contacts/${second.id}`, { phone: '+14155550122' });
      expect([moved.status, moved.body.detail, moved.body.errors]).toEqual([409, message, [{ field: 'phone', message }]]);
      const movedGql = await acme.graphql.run(UpdateContactDocument, { id: second.id, input: { phone: '+14155550122' } });
      expect([movedGql.errors?.[0]?.extensions.code, movedGql.errors?.[0]?.message]).toEqual(['CONFLICT', message]);
      expect((await acme.rest.get(`/api/contacts/${second.id}`)).body.phone).toBe('+14155550123');
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
      for (const [input, field] of [
        [{ phone: 'nope' }, 'phone'],
        [{ timeZone: 'Nowhere/City' }, 'timeZone'],
      ] as const) {
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
      expect(page.body.meta).toEqual(withCursors({ page: 2, limit: 2, total: 3, totalPages: 2, hasNextPage: false, hasPreviousPage: true }));
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
    // How fast an import runs is the benchmark's to measure (npm run bench), against a baseline in the same run: a timed test failed on a loaded machine.
    it('writes 10,000 valid rows in one call', async () => {
      const org = await app.organization('Bulk');
      const contacts = Array.from({ length: 10_000 }, (_, i) => ({ phone: phone(i), attributes: { n: i } }));
      const res = await org.rest.post('/api/contacts/import', { contacts });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ imported: 10_000 });
      expect(await countContacts(org)).toBe(10_000);
      const listed = await org.rest.get('/api/contacts?limit=1');
      expect(listed.body.meta.total).toBe(10_000);
    });

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

    // One import per organization at a time (src/modules/contacts/organization-imports.ts): the running
    // one holds its organization's row of organization_imports. Held here by hand, as a running import
    // holds it, so the test does not depend on two requests overlapping in time.
    const holdImportPlace = (org: TestOrganization, kind: string, heartbeat = 'now()', contactIds: string[] = []) =>
      app.sql(
        `insert into organization_imports (organization_id, token, kind, started_at, heartbeat_at, contact_ids)
         values (?, gen_random_uuid(), ?, timestamptz '2026-12-01 10:00:00+00', ${heartbeat}, ?::uuid[])`,
        [org.organizationId, kind, `{${contactIds.join(',')}}`],
      );

    it('a second import of the organization while one runs → 409 naming the running one, on both doors; other organizations import meanwhile', async () => {
      const org = await app.organization('Busy importer');
      const bystander = await app.organization('Bystander');
      await holdImportPlace(org, 'do-not-call');
      const rest = await org.rest.post('/api/contacts/import', { contacts: [{ phone: phone(1) }] });
      expect(rest.status).toBe(409);
      expect(rest.body.code).toBe('CONFLICT');
      expect(rest.body.detail).toBe(
        'An import is already running for this organization (do-not-call, started 2026-12-01T10:00:00.000Z); one import runs at a time: send this one when it has finished',
      );
      const gql = await org.graphql.run(ImportContactsDocument, { input: { contacts: [{ phone: phone(1) }] } });
      expect(gql.errors?.[0]?.extensions.code).toBe('CONFLICT');
      expect(gql.errors?.[0]?.message).toBe(rest.body.detail);
      const csv = await org.rest.post('/api/do-not-call/import', { csv: '+14155550100' });
      expect(csv.status).toBe(409);
      expect((await bystander.rest.post('/api/contacts/import', { contacts: [{ phone: phone(1) }] })).status).toBe(201);
      expect(await countContacts(org)).toBe(0);

      await app.sql('delete from organization_imports where organization_id = ?', [org.organizationId]);
      expect((await org.rest.post('/api/contacts/import', { contacts: [{ phone: phone(1) }] })).status).toBe(201);
      expect(await app.sql('select * from organization_imports')).toEqual([]);
    });

    it('imports sent at once: each answers 201 with all its rows or 409 with none', async () => {
      const org = await app.organization('Burst importer');
      const files = Array.from({ length: 4 }, (_, file) => Array.from({ length: 1500 }, (_, i) => ({ phone: phone(100_000 * (file + 1) + i) })));
      const answers = await Promise.all(files.map((contacts) => org.rest.post('/api/contacts/import', { contacts })));
      expect(answers.every((answer) => answer.status === 201 || answer.status === 409)).toBe(true);
      const imported = answers.filter((answer) => answer.status === 201);
      expect(imported.length).toBeGreaterThan(0);
      expect(imported.every((answer) => answer.body.imported === 1500)).toBe(true);
      expect(await countContacts(org)).toBe(1500 * imported.length);
    });

    it('a file written in chunks is undone when a later chunk fails: nothing is left, the place is free', async () => {
      const org = await app.organization('Failing importer');
      // The third chunk meets a failing database (SQLSTATE 57P03, as a server shutting down answers).
      await app.sql(`create function fail_import_row() returns trigger language plpgsql as $$
        begin if new.phone = '${phone(2500)}' then raise exception 'simulated loss' using errcode = '57P03'; end if; return new; end $$`);
      await app.sql('create trigger fail_import_row before insert on contacts for each row execute function fail_import_row()');
      try {
        const contacts = Array.from({ length: 3000 }, (_, i) => ({ phone: phone(i) }));
        const res = await org.rest.post('/api/contacts/import', { contacts });
        expect(res.status).toBe(503);
        expect(await countContacts(org)).toBe(0);
        expect(await app.sql('select * from organization_imports')).toEqual([]);
      } finally {
        await app.sql('drop trigger fail_import_row on contacts');
        await app.sql('drop function fail_import_row()');
      }
      expect((await org.rest.post('/api/contacts/import', { contacts: [{ phone: phone(1) }] })).status).toBe(201);
    });

    it('an import whose process died is undone: by the next import once its heartbeat is stale, or at the embedded database’s start', async () => {
      const org = await app.organization('Crashed importer');
      const written = await org.rest.post('/api/contacts/import', { contacts: [{ phone: phone(1) }, { phone: phone(2) }] });
      expect(written.status).toBe(201);
      const ids = (await app.sql<{ id: string }>('select id from contacts where organization_id = ?', [org.organizationId])).map((row) => row.id);
      // Left as a process that died after writing these two would leave it, its heartbeat two minutes old.
      await holdImportPlace(org, 'contacts', "now() - interval '2 minutes'", ids);
      const next = await org.rest.post('/api/contacts/import', { contacts: [{ phone: phone(3) }] });
      expect(next.status).toBe(201);
      expect((await app.sql<{ phone: string }>('select phone from contacts where organization_id = ?', [org.organizationId])).map((row) => row.phone)).toEqual([
        phone(3),
      ]);

      // A fresh heartbeat is a running import for every replica, but not at the start of the embedded
      // database's one process (main.ts asks recover({all}) there).
      const [{ id }] = await app.sql<{ id: string }>('select id from contacts where organization_id = ?', [org.organizationId]);
      await holdImportPlace(org, 'contacts', 'now()', [id!]);
      expect(await app.gateway.services.imports.recover()).toBe(0);
      expect(await countContacts(org)).toBe(1);
      expect(await app.gateway.services.imports.recover({ all: true })).toBe(1);
      expect(await countContacts(org)).toBe(0);
      expect(await app.sql('select * from organization_imports')).toEqual([]);
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
});

describe('audiences', () => {
  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  const AUDIENCE_KEYS = ['contactCount', 'createdAt', 'description', 'filter', 'id', 'kind', 'name', 'organizationId', 'updatedAt'];
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
      expect(res.body.meta).toEqual(withCursors({ page: 2, limit: 20, total: 45, totalPages: 3, hasNextPage: true, hasPreviousPage: true }));
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
      expect(last.body.meta).toEqual(withCursors({ page: 3, limit: 20, total: 45, totalPages: 3, hasNextPage: false, hasPreviousPage: true }));
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
      for (const [name, members] of [
        ['One', 1],
        ['Three', 3],
        ['None', 0],
      ] as const) {
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

      // REST's twin of Audience.contacts: the same page, the same meta, the same list arguments.
      const members = await org.rest.get(`/api/audience/${made.Three}/members?limit=2&sortBy=phone&sortOrder=asc`);
      expect(members.status).toBe(200);
      expect(members.body.data.map((contact: { phone: string }) => contact.phone)).toEqual(['+14155550000', '+14155550001']);
      // The members page of one audience carries its cursors; the audiences page's nested pages (one statement for all) do not.
      expect(members.body.meta).toEqual({ ...three.contacts.meta, nextCursor: expect.any(String), lastCursor: expect.any(String) });
      const second = await org.rest.get(`/api/audience/${made.Three}/members?limit=2&page=2&sortBy=phone&sortOrder=asc`);
      expect(second.body.data).toEqual([expect.objectContaining({ id: ids[2], phone: '+14155550002', organizationId: org.organizationId })]);
      expect((await org.rest.get(`/api/audience/${made.Three}/members?search=0001`)).body.data.map((contact: { id: string }) => contact.id)).toEqual([ids[1]]);
      expect((await org.rest.get(`/api/audience/${made.None}/members`)).body).toEqual({
        data: [],
        meta: withCursors({ page: 1, limit: 20, total: 0, totalPages: 0, hasNextPage: false, hasPreviousPage: false }),
      });
      const bad = await org.rest.get(`/api/audience/${made.Three}/members?limit=101&sortBy=sideways`);
      expect([bad.status, fieldsOf(bad.body.errors)]).toEqual([400, ['limit']]);
      expect((await org.rest.get(`/api/audience/${made.Three}/members?sortBy=sideways`)).status).toBe(400);
      expect((await org.rest.get('/api/audience/not-a-uuid/members')).status).toBe(404);
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
});

describe('isolation', () => {
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
        await other.rest.get(`/api/audience/${audienceId}/members`),
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
});
