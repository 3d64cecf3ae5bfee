import {
  AddSegmentMembersDocument,
  ContactsByCursorDocument,
  CreateSegmentDocument,
  SegmentDocument,
  SegmentMembersOfPageDocument,
  SegmentPreviewDocument,
  UpdateSegmentDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createFlow } from '../programs/fixtures.js';

// Segments (dynamic audiences), cursor pages and indexed search, through both doors, on PGlite and
// (with TEST_DATABASE_URL) PostgreSQL. Small sizes: the million-row numbers are the bench's (--only=scale).

const GOLD_IN_EUROPE = {
  all: [
    { field: 'attributes.tier', op: 'eq', value: 'gold' },
    { field: 'timeZone', op: 'prefix', value: 'Europe/' },
  ],
};

describe('segments', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;
  let n = 0;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    other = await app.organization('Other');
    await acme.grantCredits(100);
  });
  afterAll(() => app.close());

  const contact = async (org: TestOrganization, fields: Record<string, unknown>): Promise<string> => {
    const res = await org.rest.post('/api/contacts', { phone: `+3361${String(++n).padStart(7, '0')}`, ...fields });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  const memberIds = async (org: TestOrganization, audienceId: string): Promise<string[]> => {
    const res = await org.rest.get(`/api/audience/${audienceId}/members?limit=100`);
    expect(res.status).toBe(200);
    return res.body.data.map((each: { id: string }) => each.id).sort();
  };

  describe('gold in Europe', () => {
    let gold: string[];
    let segmentId: string;

    beforeAll(async () => {
      gold = [
        await contact(acme, { name: 'Paris', timeZone: 'Europe/Paris', attributes: { tier: 'gold' } }),
        await contact(acme, { name: 'Berlin', timeZone: 'Europe/Berlin', attributes: { tier: 'gold', renewal: '2026-03-01' } }),
      ].sort();
      await contact(acme, { name: 'New York', timeZone: 'America/New_York', attributes: { tier: 'gold' } });
      await contact(acme, { name: 'Lisbon silver', timeZone: 'Europe/Lisbon', attributes: { tier: 'silver' } });
      await contact(acme, { name: 'Madrid opted out', timeZone: 'Europe/Madrid', attributes: { tier: 'gold' }, optedOut: true });
      await contact(other, { name: 'Other org gold', timeZone: 'Europe/Rome', attributes: { tier: 'gold' } });
      const created = await acme.rest.post('/api/audience', { name: 'Gold in Europe', filter: GOLD_IN_EUROPE });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ kind: 'dynamic', filter: GOLD_IN_EUROPE, contactCount: 3 });
      segmentId = created.body.id;
    });

    it('is created, read and updated on both doors; its members are whoever matches, of the organization only', async () => {
      const { audience } = await acme.graphql.ok(SegmentDocument, { id: segmentId, limit: 10 });
      expect(audience).toMatchObject({ id: segmentId, kind: 'dynamic', filter: GOLD_IN_EUROPE, contactCount: 3 });
      // Members: the opted-out contact matches (it is a member; an execution leaves it out).
      expect(audience.contacts.data).toHaveLength(3);
      expect(audience.contacts.meta.total).toBe(3);
      expect(await memberIds(acme, segmentId)).toEqual(audience.contacts.data.map((each) => each.id).sort());
      const { createAudience } = await acme.graphql.ok(CreateSegmentDocument, {
        input: { name: 'By GraphQL', filter: { field: 'attributes.tier', op: 'in', value: ['silver', 'bronze'] } },
      });
      expect(createAudience).toMatchObject({ kind: 'dynamic', contactCount: 1 });
      const { updateAudience } = await acme.graphql.ok(UpdateSegmentDocument, {
        id: createAudience.id,
        input: { filter: { field: 'attributes.tier', op: 'eq', value: 'gold' } },
      });
      expect(updateAudience).toMatchObject({ kind: 'dynamic', filter: { field: 'attributes.tier', op: 'eq', value: 'gold' }, contactCount: 4 });
      const rest = await acme.rest.put(`/api/audience/${createAudience.id}`, { filter: { not: { field: 'attributes.tier', op: 'exists' } } });
      expect(rest.body).toMatchObject({ kind: 'dynamic', contactCount: 0 });
      // In a page of audiences, a segment's count and members are its filter's too.
      const { audiences } = await acme.graphql.ok(SegmentMembersOfPageDocument);
      const listed = audiences.data.find((each) => each.id === segmentId)!;
      expect(listed.contactCount).toBe(3);
      expect(listed.contacts.data.map((each) => each.id).sort()).toEqual(audience.contacts.data.map((each) => each.id).sort());
      expect((await acme.rest.get('/api/audience?limit=100')).body.data.find((each: { id: string }) => each.id === segmentId).contactCount).toBe(3);
    });

    it('counts a filter before it is saved, on both doors: the count the segment has once saved, of the organization’s contacts only', async () => {
      const preview = async (org: TestOrganization, filter: Record<string, unknown>): Promise<number> => {
        const rest = await org.rest.post('/api/audience/preview', { filter });
        expect(rest.status).toBe(200);
        expect(Object.keys(rest.body)).toEqual(['contactCount']);
        const { segmentPreview } = await org.graphql.ok(SegmentPreviewDocument, { filter });
        expect(segmentPreview.contactCount).toBe(rest.body.contactCount);
        return rest.body.contactCount;
      };
      // The saved segment's filter: its count. Another organization's contacts are not counted (Other has one gold contact in Europe).
      expect(await preview(acme, GOLD_IN_EUROPE)).toBe((await acme.rest.get(`/api/audience/${segmentId}`)).body.contactCount);
      expect(await preview(acme, GOLD_IN_EUROPE)).toBe(3);
      expect(await preview(other, GOLD_IN_EUROPE)).toBe(1);
      // A filter not saved yet: counted, then saved, the segment counts the same; the preview wrote nothing.
      const filter = {
        any: [
          { field: 'attributes.tier', op: 'eq', value: 'silver' },
          { field: 'name', op: 'prefix', value: 'New' },
        ],
      };
      const audiences = (await app.sql<{ n: number }>('select count(*)::int as n from audiences'))[0]!.n;
      const counted = await preview(acme, filter);
      expect((await app.sql<{ n: number }>('select count(*)::int as n from audiences'))[0]!.n).toBe(audiences);
      expect(counted).toBe(2);
      const saved = await acme.rest.post('/api/audience', { name: 'Silver or New', filter });
      expect(saved.body.contactCount).toBe(counted);
      expect(await preview(other, filter)).toBe(0);
      await acme.rest.delete(`/api/audience/${saved.body.id}`);
      // No filter at all: 400 naming it (GraphQL's argument is required by the schema).
      const missing = await acme.rest.post('/api/audience/preview', {});
      expect([missing.status, missing.body.code, missing.body.errors.map((error: { field: string }) => error.field)]).toEqual([
        400,
        'BAD_USER_INPUT',
        ['filter'],
      ]);
    });

    it('counts live: a contact that comes to match is a member at once, one that stops matching is not', async () => {
      const lyon = await contact(acme, { name: 'Lyon', timeZone: 'Europe/Paris', attributes: { tier: 'gold' } });
      expect((await acme.rest.get(`/api/audience/${segmentId}`)).body.contactCount).toBe(4);
      await acme.rest.put(`/api/contacts/${lyon}`, { attributes: { tier: 'silver' } });
      expect((await acme.rest.get(`/api/audience/${segmentId}`)).body.contactCount).toBe(3);
      await acme.rest.delete(`/api/contacts/${lyon}`);
    });

    it('an execution snapshots whoever matches when it is created, opted-out contacts left out', async () => {
      const flowId = await createFlow(acme);
      const program = await acme.rest.post('/api/programs', { name: 'Gold campaign', kind: 'campaign', flowId, audienceId: segmentId });
      expect(program.status).toBe(201);
      expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
      const execution = await acme.rest.post(`/api/programs/${program.body.id}/executions`);
      expect(execution.status).toBe(201);
      expect(execution.body.totalContacts).toBe(2);
      const queued = await app.sql<{ contact_id: string }>('select contact_id from execution_contacts where execution_id = ? order by contact_id', [
        execution.body.id,
      ]);
      expect(queued.map((row) => row.contact_id)).toEqual(gold);
      // A contact matching later joins the next execution, not this one.
      await contact(acme, { timeZone: 'Europe/Oslo', attributes: { tier: 'gold' } });
      expect((await acme.rest.get(`/api/executions/${execution.body.id}`)).body.totalContacts).toBe(2);
      expect((await acme.rest.post(`/api/programs/${program.body.id}/executions`)).body.totalContacts).toBe(3);
    });

    it('refuses members added or removed by hand with 409 naming why, on both doors', async () => {
      const rest = await acme.rest.post(`/api/audience/${segmentId}/members`, { contactIds: [gold[0]] });
      expect(rest.status).toBe(409);
      expect(rest.body.detail).toMatch(/dynamic: its members are the contacts its filter matches/);
      const gql = await acme.graphql.run(AddSegmentMembersDocument, { audienceId: segmentId, contactIds: [gold[0]!] });
      expect([gql.errors?.[0]?.extensions.code, gql.errors?.[0]?.message]).toEqual(['CONFLICT', rest.body.detail]);
      expect((await acme.rest.request('DELETE', `/api/audience/${segmentId}/members`, { contactIds: [gold[0]] })).status).toBe(409);
      // A static audience has no filter to change.
      const plain = await acme.rest.post('/api/audience', { name: 'Static' });
      expect(plain.body).toMatchObject({ kind: 'static', filter: null });
      const changed = await acme.rest.put(`/api/audience/${plain.body.id}`, { filter: GOLD_IN_EUROPE });
      expect([changed.status, changed.body.code]).toEqual([409, 'CONFLICT']);
    });

    it('is 404 to another organization on both doors', async () => {
      for (const res of [
        await other.rest.get(`/api/audience/${segmentId}`),
        await other.rest.get(`/api/audience/${segmentId}/members`),
        await other.rest.put(`/api/audience/${segmentId}`, { filter: GOLD_IN_EUROPE }),
      ]) {
        expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
      }
      const gql = await other.graphql.run(SegmentDocument, { id: segmentId });
      expect(gql.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      const updated = await other.graphql.run(UpdateSegmentDocument, { id: segmentId, input: { name: 'Mine' } });
      expect(updated.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    });
  });

  it('a filter on an attribute no contact has is an empty audience, and an execution of nobody', async () => {
    const made = await acme.rest.post('/api/audience', { name: 'Nobody', filter: { field: 'attributes.neverSet', op: 'eq', value: 'x' } });
    expect(made.body.contactCount).toBe(0);
    const members = await acme.rest.get(`/api/audience/${made.body.id}/members`);
    expect([members.status, members.body.data, members.body.meta.total]).toEqual([200, [], 0]);
    for (const op of [{ op: 'exists' }, { op: 'prefix', value: 'a' }, { op: 'before', value: '2030-01-01' }]) {
      const res = await acme.rest.post('/api/audience', { name: `Nobody ${op.op}`, filter: { field: 'attributes.neverSet.deeper', ...op } });
      expect([res.status, res.body.contactCount]).toEqual([201, 0]);
    }
    const flowId = await createFlow(acme);
    const program = await acme.rest.post('/api/programs', { name: 'Nobody campaign', kind: 'campaign', flowId, audienceId: made.body.id });
    await acme.rest.post(`/api/programs/${program.body.id}/activate`);
    const execution = await acme.rest.post(`/api/programs/${program.body.id}/executions`);
    expect([execution.status, execution.body.totalContacts]).toEqual([201, 0]);
  });

  it('matches each operator as documented', async () => {
    const org = await app.organization('Operators');
    const a = await contact(org, {
      name: 'Ann',
      timeZone: 'Europe/Paris',
      attributes: { score: 7, vip: true, renewal: '2026-03-01T10:00:00Z', address: { city: 'Lyon' } },
    });
    const b = await contact(org, { name: 'Bob', attributes: { score: '7', renewal: '2026-05-20', address: { city: 'Lyonnais' } } });
    const c = await contact(org, { attributes: { renewal: 'soon', code: '100%_off' } });
    const cases: [unknown, string[]][] = [
      [{ field: 'attributes.score', op: 'eq', value: 7 }, [a]],
      [{ field: 'attributes.score', op: 'eq', value: '7' }, [b]],
      [{ field: 'attributes.vip', op: 'eq', value: true }, [a]],
      [{ field: 'attributes.address.city', op: 'eq', value: 'Lyon' }, [a]],
      [{ field: 'attributes.address.city', op: 'prefix', value: 'Lyon' }, [a, b]],
      [{ field: 'attributes.code', op: 'prefix', value: '100%' }, [c]],
      [{ field: 'attributes.code', op: 'prefix', value: '10_' }, []],
      [{ field: 'attributes.renewal', op: 'before', value: '2026-04-01' }, [a]],
      [{ field: 'attributes.renewal', op: 'after', value: '2026-03-01' }, [b]],
      [{ field: 'attributes.score', op: 'exists' }, [a, b]],
      [{ field: 'name', op: 'exists' }, [a, b]],
      [{ not: { field: 'name', op: 'eq', value: 'Ann' } }, [b, c]],
      [{ not: { field: 'timeZone', op: 'prefix', value: 'Europe/' } }, [b, c]],
      [{ field: 'name', op: 'in', value: ['Ann', 'Bob', 'Zed'] }, [a, b]],
      [
        {
          any: [
            { field: 'attributes.vip', op: 'eq', value: true },
            { field: 'attributes.code', op: 'exists' },
          ],
        },
        [a, c],
      ],
      [{ field: 'createdAt', op: 'after', value: '2000-01-01' }, [a, b, c]],
      [{ field: 'createdAt', op: 'before', value: '2000-01-01' }, []],
      [{ field: 'attributes.score', op: 'eq', value: "7' or true --" }, []],
    ];
    for (const [filter, expected] of cases) {
      const made = await org.rest.post('/api/audience', { name: 'Case', filter });
      expect([made.status, JSON.stringify(filter)]).toEqual([201, JSON.stringify(filter)]);
      expect([JSON.stringify(filter), await memberIds(org, made.body.id)]).toEqual([JSON.stringify(filter), [...expected].sort()]);
      expect(made.body.contactCount).toBe(expected.length);
    }
  });

  const deep = (levels: number): unknown => (levels === 0 ? { field: 'name', op: 'exists' } : { not: deep(levels - 1) });
  const refused: [string, unknown, RegExp][] = [
    [
      'an unknown field',
      { field: 'secret', op: 'eq', value: 'x' },
      /filter\.field must be one of name, phone, timeZone, createdAt, optedOut or attributes\.<key>/,
    ],
    ['an attribute key with SQL in it', { field: "attributes.tier'); drop table contacts; --", op: 'eq', value: 'x' }, /attribute key/],
    ['an attribute path too deep', { field: 'attributes.a.b.c.d', op: 'exists' }, /more than 3 keys deep/],
    ['an operator the field does not take', { field: 'phone', op: 'before', value: '2026-01-01' }, /filter\.op must be one of eq, in, prefix for phone/],
    ['a value of the wrong type', { field: 'optedOut', op: 'eq', value: 'yes' }, /filter\.value must be a boolean/],
    ['a date that is not one', { field: 'createdAt', op: 'after', value: '2026-02-30' }, /must be a date, YYYY-MM-DD/],
    ['a value too long', { field: 'name', op: 'eq', value: 'x'.repeat(201) }, /must be 1 to 200 characters/],
    ['too many values in in', { field: 'name', op: 'in', value: Array.from({ length: 101 }, (_, i) => `n${i}`) }, /array of 1 to 100 values/],
    ['too many conditions', { any: Array.from({ length: 21 }, () => ({ field: 'name', op: 'exists' })) }, /more than 20 conditions/],
    ['nesting too deep', deep(5), /nests more than 4 levels/],
    ['an empty all', { all: [] }, /non-empty array/],
    ['a value for exists', { field: 'name', op: 'exists', value: true }, /must be left out for exists/],
    ['an unknown key', { field: 'name', op: 'eq', value: 'x', sql: '1=1' }, /unknown keys: sql/],
    ['too large', { any: [{ field: 'name', op: 'in', value: Array.from({ length: 30 }, () => 'y'.repeat(190)) }] }, /bytes of JSON; at most 4096/],
  ];
  it.each(refused)('refuses %s with the same 400 on both doors', async (_label, filter, message) => {
    const rest = await acme.rest.post('/api/audience', { name: 'Bad', filter });
    expect([rest.status, rest.body.code]).toEqual([400, 'BAD_USER_INPUT']);
    expect(rest.body.errors.map((error: { field: string }) => error.field)).toEqual(['filter']);
    expect(rest.body.errors[0].message).toMatch(message);
    const gql = await acme.graphql.run(CreateSegmentDocument, { input: { name: 'Bad', filter: filter as never } });
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(gql.errors?.[0]?.extensions.errors).toEqual(rest.body.errors);
  });
  it.each(refused)('refuses %s in a preview with the same 400 as a save, on both doors', async (_label, filter) => {
    const saved = await acme.rest.post('/api/audience', { name: 'Bad', filter });
    const rest = await acme.rest.post('/api/audience/preview', { filter });
    expect([rest.status, rest.body.code, rest.body.errors]).toEqual([400, 'BAD_USER_INPUT', saved.body.errors]);
    const gql = await acme.graphql.run(SegmentPreviewDocument, { filter: filter as never });
    expect([gql.errors?.[0]?.extensions.code, gql.errors?.[0]?.extensions.errors]).toEqual(['BAD_USER_INPUT', rest.body.errors]);
  });
});

describe('cursor pages', () => {
  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    // 23 contacts, some sharing a name and some without one, several in one statement (one created_at).
    const contacts = Array.from({ length: 23 }, (_, i) => ({ phone: `+3362${String(i).padStart(7, '0')}`, ...(i % 4 === 0 ? {} : { name: `Name ${i % 5}` }) }));
    expect((await acme.rest.post('/api/contacts/import', { contacts })).status).toBe(201);
  });
  afterAll(() => app.close());

  /** Walks a list by nextCursor from its first page, inserting a contact between pages; answers the ids in order. */
  async function walk(path: string, between?: () => Promise<unknown>): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let page = await acme.rest.get(path);
    let pages = 1;
    for (;;) {
      expect(page.status).toBe(200);
      expect(page.body.meta.page).toBe(pages);
      ids.push(...page.body.data.map((each: { id: string }) => each.id));
      if (!page.body.meta.nextCursor) break;
      expect(page.body.meta.hasNextPage).toBe(true);
      await between?.();
      page = await acme.rest.get(`${path}&cursor=${page.body.meta.nextCursor}`);
      pages++;
    }
    expect(page.body.meta.hasNextPage).toBe(false);
    return { ids, pages };
  }

  const allIds = async (order: string) =>
    (await app.sql<{ id: string }>(`select id from contacts where organization_id = ? order by ${order}`, [acme.organizationId])).map((row) => row.id);

  let inserted = 0;
  const insert = async () => {
    const res = await acme.rest.post('/api/contacts', { phone: `+3363${String(inserted++).padStart(7, '0')}`, name: `Name ${inserted % 5}` });
    expect(res.status).toBe(201);
  };

  it.each([
    ['newest first (the default)', 'limit=4', 'created_at desc, id desc'],
    ['by name ascending, nulls last', 'limit=4&sortBy=name&sortOrder=asc', 'name asc nulls last, id asc'],
    ['by name descending, nulls first', 'limit=4&sortBy=name&sortOrder=desc', 'name desc nulls first, id desc'],
  ])('walk %s end to end with rows inserted between pages: none missed, none repeated', async (_label, query, order) => {
    const before = await allIds(order);
    const { ids } = await walk(`/api/contacts?${query}`, insert);
    expect(new Set(ids).size).toBe(ids.length);
    // Every row there when the walk began is met once, in the list's order; rows inserted meanwhile only where the order puts them after the cursor.
    expect(ids.filter((id) => before.includes(id))).toEqual(before);
    const after = await allIds(order);
    expect(ids).toEqual(after.filter((id) => ids.includes(id)));
  });

  it('walks back by prevCursor, and lastCursor is the last page by number', async () => {
    const first = await acme.rest.get('/api/contacts?limit=5');
    const total = first.body.meta.total;
    const last = await acme.rest.get(`/api/contacts?limit=5&cursor=${first.body.meta.lastCursor}`);
    const byNumber = await acme.rest.get(`/api/contacts?limit=5&page=${first.body.meta.totalPages}`);
    expect(last.body.data).toEqual(byNumber.body.data);
    expect(last.body.meta).toMatchObject({ page: first.body.meta.totalPages, total, hasNextPage: false, nextCursor: null, hasPreviousPage: true });
    const back = await acme.rest.get(`/api/contacts?limit=5&cursor=${last.body.meta.prevCursor}`);
    const previous = await acme.rest.get(`/api/contacts?limit=5&page=${first.body.meta.totalPages - 1}`);
    expect(back.body.data).toEqual(previous.body.data);
    expect(back.body.meta).toMatchObject({ page: first.body.meta.totalPages - 1, hasNextPage: true, hasPreviousPage: true });
    // Back to the first page: no previous page, no prevCursor.
    let page = back;
    while (page.body.meta.prevCursor) page = await acme.rest.get(`/api/contacts?limit=5&cursor=${page.body.meta.prevCursor}`);
    expect(page.body.data).toEqual(first.body.data);
    expect(page.body.meta).toMatchObject({ page: 1, hasPreviousPage: false });
  });

  it('GraphQL answers the same pages and cursors as REST, and the same refusals', async () => {
    const rest = await acme.rest.get('/api/contacts?limit=3&sortBy=name&sortOrder=asc&search=name');
    const { contacts } = await acme.graphql.ok(ContactsByCursorDocument, { limit: 3, sortBy: 'name', sortOrder: 'asc' as never, search: 'name' });
    expect(contacts.meta).toEqual(rest.body.meta);
    const next = await acme.rest.get(`/api/contacts?limit=3&sortBy=name&sortOrder=asc&search=name&cursor=${rest.body.meta.nextCursor}`);
    const { contacts: nextByGraphql } = await acme.graphql.ok(ContactsByCursorDocument, {
      limit: 3,
      sortBy: 'name',
      sortOrder: 'asc' as never,
      search: 'name',
      cursor: rest.body.meta.nextCursor,
    });
    expect([nextByGraphql.data.map((each) => each.id), nextByGraphql.meta]).toEqual([next.body.data.map((each: { id: string }) => each.id), next.body.meta]);
    for (const [cursor, sortBy, message] of [
      ['not-a-cursor!', 'name', /cursor is not a cursor this list answered/],
      [Buffer.from('[1,"a","name","asc",["x","not-a-uuid"],2]').toString('base64url'), 'name', /cursor is not a cursor this list answered/],
      [rest.body.meta.nextCursor, 'phone', /cursor was made for sortBy=name sortOrder=asc/],
    ] as const) {
      const bad = await acme.rest.get(`/api/contacts?limit=3&sortBy=${sortBy}&sortOrder=asc&cursor=${cursor}`);
      expect([bad.status, bad.body.errors?.[0]?.field]).toEqual([400, 'cursor']);
      expect(bad.body.errors[0].message).toMatch(message);
      const gql = await acme.graphql.run(ContactsByCursorDocument, { limit: 3, sortBy, sortOrder: 'asc' as never, cursor });
      expect([gql.errors?.[0]?.extensions.code, gql.errors?.[0]?.extensions.errors]).toEqual(['BAD_USER_INPUT', bad.body.errors]);
    }
  });

  it('walks an audience’s members, static and dynamic, by cursor on both doors', async () => {
    const ids = await allIds('created_at desc, id desc');
    const audience = await acme.rest.post('/api/audience', { name: 'Static' });
    await acme.rest.post(`/api/audience/${audience.body.id}/members`, { contactIds: ids.slice(0, 11) });
    const segment = await acme.rest.post('/api/audience', { name: 'Named 1', filter: { field: 'name', op: 'eq', value: 'Name 1' } });
    for (const id of [audience.body.id, segment.body.id]) {
      const expected = (await acme.rest.get(`/api/audience/${id}/members?limit=100`)).body.data.map((each: { id: string }) => each.id);
      const { ids: walked, pages } = await walk(`/api/audience/${id}/members?limit=2`);
      expect(walked).toEqual(expected);
      expect(pages).toBe(Math.ceil(expected.length / 2));
      let viaGraphql: string[] = [];
      let cursor: string | null | undefined;
      do {
        const { audience: read } = await acme.graphql.ok(SegmentDocument, { id, limit: 2, cursor });
        viaGraphql = [...viaGraphql, ...read.contacts.data.map((each) => each.id)];
        cursor = read.contacts.meta.nextCursor;
      } while (cursor);
      expect(viaGraphql).toEqual(expected);
    }
  });
});

describe('search by the index', () => {
  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    // Seeded in SQL (the door is not what is tested here): 20,000 contacts, one of them Zanzibar, 1 in 100 gold.
    await app.sql(
      `insert into contacts (id, created_at, updated_at, organization_id, name, phone, attributes, opted_out)
       select gen_random_uuid(), now(), now(), ?, case when i = 12345 then 'Zanzibar Quux' else 'Contact ' || i end, '+1555' || lpad(i::text, 7, '0'), jsonb_build_object('tier', case when i % 100 = 0 then 'gold' else 'basic' end), false
       from generate_series(1, 20000) i`,
      [acme.organizationId],
    );
    // As autovacuum leaves it (PGlite has none: a GIN index's pending list is merged when it fills): the planner then prices the indexes as they are.
    await app.sql('vacuum analyze contacts');
  });
  afterAll(() => app.close());

  /** The plan of `sql` with sequential scans priced out, as the planner would choose on a large table. */
  async function plan(sql: string, params: unknown[]): Promise<string> {
    const em = app.db.database.em.fork();
    return em.transactional(async (tx) => {
      await tx.execute('set local enable_seqscan = off');
      const rows = await tx.execute<{ 'QUERY PLAN': string }[]>(`explain ${sql}`, params as never[]);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
  }

  it('finds a contact by any part of its name or phone, case-insensitively, through the trigram indexes', async () => {
    const res = await acme.rest.get('/api/contacts?search=ZIBAR%20q');
    expect(res.body.data.map((each: { name: string }) => each.name)).toEqual(['Zanzibar Quux']);
    expect(res.body.meta.total).toBe(1);
    const byPhone = await acme.rest.get('/api/contacts?search=5550012345');
    expect(byPhone.body.data.map((each: { name: string }) => each.name)).toEqual(['Zanzibar Quux']);
    const shown = await plan(
      `select id from contacts where organization_id = ? and (name ilike ? or phone ilike ?) order by created_at desc, id desc limit 20`,
      [acme.organizationId, '%zibar q%', '%zibar q%'],
    );
    expect(shown).toMatch(/contacts_name_trigram_index/);
    expect(shown).toMatch(/contacts_phone_trigram_index/);
  });

  it('serves a segment’s equals and in from the GIN index on attributes', async () => {
    const made = await acme.rest.post('/api/audience', { name: 'Gold', filter: { field: 'attributes.tier', op: 'in', value: ['gold', 'platinum'] } });
    expect(made.body.contactCount).toBe(200);
    const shown = await plan(`select count(*) from contacts c where c.organization_id = ? and (c.attributes @> ?::jsonb or c.attributes @> ?::jsonb)`, [
      acme.organizationId,
      '{"tier":"gold"}',
      '{"tier":"platinum"}',
    ]);
    expect(shown).toMatch(/contacts_attributes_path_index/);
  });
});
