import {
  AddDoNotCallDocument,
  DoNotCallEntriesDocument,
  DoNotCallEntryDocument,
  ImportDoNotCallDocument,
  RemoveDoNotCallDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { addUser } from '../helpers/users.js';
import { withCursors } from '../helpers/pages.js';

// The do-not-call list on both doors: add, read, list, remove, import with a per-row report; the
// same errors for the same bad input on REST and GraphQL; nothing crosses organizations.
// Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme DNC');
  other = await app.organization('Other DNC');
});
afterAll(() => app.close());

const path = (phone: string) => `/api/do-not-call/${encodeURIComponent(phone)}`;

describe('the do-not-call list', () => {
  it('adds, reads, lists and removes a number on both doors, each entry with its source and time', async () => {
    const rest = await acme.rest.post('/api/do-not-call', { phone: '+14155550100', note: 'asked by email' });
    expect(rest.status).toBe(201);
    expect(rest.body).toMatchObject({
      phone: '+14155550100',
      source: 'manual',
      note: 'asked by email',
      callId: null,
      contactId: null,
      organizationId: acme.organizationId,
    });
    expect(Date.parse(rest.body.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    const { addDoNotCall } = await acme.graphql.ok(AddDoNotCallDocument, { input: { phone: '+14155550101' } });
    expect(addDoNotCall).toMatchObject({ phone: '+14155550101', source: 'manual', note: null });

    // The number in the path as it is, or with its + escaped.
    expect((await acme.rest.get('/api/do-not-call/+14155550101')).body).toEqual(addDoNotCall);
    expect((await acme.rest.get(path('+14155550100'))).body).toEqual(rest.body);
    expect((await acme.graphql.ok(DoNotCallEntryDocument, { id: '+14155550100' })).doNotCallEntry).toEqual(rest.body);
    // Or by the entry's id.
    expect((await acme.rest.get(`/api/do-not-call/${rest.body.id}`)).body).toEqual(rest.body);
    expect((await acme.graphql.ok(DoNotCallEntryDocument, { id: addDoNotCall.id })).doNotCallEntry).toEqual(addDoNotCall);
    expect((await acme.rest.get('/api/do-not-call/4155550100')).status).toBe(404);

    const listed = await acme.rest.get('/api/do-not-call?sortBy=phone&sortOrder=asc&limit=1');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((entry: { phone: string }) => entry.phone)).toEqual(['+14155550100']);
    expect(listed.body.meta).toEqual(withCursors({ page: 1, limit: 1, total: 2, totalPages: 2, hasNextPage: true, hasPreviousPage: false }));
    const { doNotCallEntries } = await acme.graphql.ok(DoNotCallEntriesDocument, { sortBy: 'phone', sortOrder: 'asc', limit: 1, page: 2 });
    expect(doNotCallEntries.data.map((entry) => entry.phone)).toEqual(['+14155550101']);
    expect((await acme.rest.get('/api/do-not-call?search=email')).body.data.map((entry: { phone: string }) => entry.phone)).toEqual(['+14155550100']);

    expect((await acme.rest.delete(path('+14155550100'))).status).toBe(204);
    expect((await acme.graphql.ok(RemoveDoNotCallDocument, { id: addDoNotCall.id })).removeDoNotCall.phone).toBe('+14155550101');
    expect((await acme.rest.get(path('+14155550100'))).status).toBe(404);
    expect((await acme.graphql.run(DoNotCallEntryDocument, { id: '+14155550101' })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await acme.rest.delete(path('+14155550101'))).status).toBe(404);
  });

  it('answers the same errors on both doors: a bad number 400 naming phone, a number already listed 409, a bad sortBy 400', async () => {
    const rest = await acme.rest.post('/api/do-not-call', { phone: '415-555-0100' });
    const gql = await acme.graphql.run(AddDoNotCallDocument, { input: { phone: '415-555-0100' } });
    expect([rest.status, rest.body.code, rest.body.errors]).toEqual([
      400,
      'BAD_USER_INPUT',
      [{ field: 'phone', message: 'phone must be an E.164 number such as +14155550100' }],
    ]);
    expect([gql.errors?.[0]?.extensions.code, gql.errors?.[0]?.extensions.errors]).toEqual(['BAD_USER_INPUT', rest.body.errors]);

    expect((await acme.rest.post('/api/do-not-call', { phone: '+14155550102' })).status).toBe(201);
    const again = await acme.rest.post('/api/do-not-call', { phone: '+14155550102' });
    const againGql = await acme.graphql.run(AddDoNotCallDocument, { input: { phone: '+14155550102' } });
    expect([again.status, again.body.code]).toEqual([409, 'CONFLICT']);
    expect(again.body.detail).toMatch(/^\+14155550102 is already on the do-not-call list \(manual, since .+\)$/);
    expect([againGql.errors?.[0]?.extensions.code, againGql.errors?.[0]?.message]).toEqual(['CONFLICT', again.body.detail]);

    const sort = await acme.rest.get('/api/do-not-call?sortBy=note');
    const sortGql = await acme.graphql.run(DoNotCallEntriesDocument, { sortBy: 'note' });
    expect([sort.status, sort.body.errors]).toEqual([400, [{ field: 'sortBy', message: 'sortBy must be one of createdAt, phone' }]]);
    expect(sortGql.errors?.[0]?.extensions.errors).toEqual(sort.body.errors);
  });

  it('imports a CSV on both doors: the good rows land, each bad row is reported with its line and reason, repeats are merged', async () => {
    await acme.rest.post('/api/do-not-call', { phone: '+14155550200' });
    const csv = [
      'name,phone,note',
      'Ada,+14155550201,asked on the phone',
      'Bob,not a number,',
      'Cy,,',
      '',
      'Di,+14155550201,twice',
      'Ed,+14155550200,',
      'Fay,"+14155550202","lawyer, please"',
    ].join('\r\n');
    const rest = await acme.rest.post('/api/do-not-call/import', { csv });
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual({
      added: 2,
      skipped: [
        { line: 6, phone: '+14155550201', reason: 'repeats line 2' },
        { line: 7, phone: '+14155550200', reason: expect.stringMatching(/^\+14155550200 is already on the do-not-call list \(manual, since /) },
      ],
      rejected: [
        { line: 3, reason: '"not a number" is not an E.164 number such as +14155550100' },
        { line: 4, reason: 'no phone number' },
      ],
    });
    const imported = await acme.rest.get(path('+14155550202'));
    expect(imported.body).toMatchObject({ source: 'import', note: 'lawyer, please' });
    expect((await acme.rest.get(path('+14155550201'))).body.note).toBe('asked on the phone');

    // The same file again through GraphQL: the same report, every good row now already listed.
    const { importDoNotCall } = await acme.graphql.ok(ImportDoNotCallDocument, { input: { csv } });
    expect(importDoNotCall.added).toBe(0);
    expect(importDoNotCall.rejected).toEqual(rest.body.rejected);
    expect(importDoNotCall.skipped.map((row) => [row.line, row.phone])).toEqual([
      [2, '+14155550201'],
      [6, '+14155550201'],
      [7, '+14155550200'],
      [8, '+14155550202'],
    ]);

    // A file over 10000 rows is refused whole, the same on both doors.
    const big = Array.from({ length: 10_001 }, (_, i) => `+1202${String(5_000_000 + i)}`).join('\n');
    const tooMany = await acme.rest.post('/api/do-not-call/import', { csv: big });
    const tooManyGql = await acme.graphql.run(ImportDoNotCallDocument, { input: { csv: big } });
    expect([tooMany.status, tooMany.body.errors]).toEqual([400, [{ field: 'csv', message: 'csv must have at most 10000 rows; it has 10001' }]]);
    expect(tooManyGql.errors?.[0]?.extensions.errors).toEqual(tooMany.body.errors);
    expect((await acme.rest.get(path('+12025000000'))).status).toBe(404);
    const empty = await acme.rest.post('/api/do-not-call/import', { csv: '' });
    const emptyGql = await acme.graphql.run(ImportDoNotCallDocument, { input: { csv: '' } });
    expect([empty.status, empty.body.errors?.[0]?.field]).toEqual([400, 'csv']);
    expect(emptyGql.errors?.[0]?.extensions.errors).toEqual(empty.body.errors);
  });

  // Security review 4, Info: +4402071234567 and +442071234567 passed as two numbers on the list.
  it('takes a trunk 0 after the country code as the same number on both doors: add, import, read and remove', async () => {
    const rest = await acme.rest.post('/api/do-not-call', { phone: '+4402071234567' });
    expect([rest.status, rest.body.phone]).toEqual([201, '+442071234567']);
    const again = await acme.graphql.run(AddDoNotCallDocument, { input: { phone: '+442071234567' } });
    expect(again.errors?.[0]?.extensions.code).toBe('CONFLICT');
    expect((await acme.rest.post('/api/do-not-call', { phone: '+4402071234567' })).status).toBe(409);
    for (const spelling of ['+4402071234567', '+442071234567']) {
      expect((await acme.rest.get(path(spelling))).body.id).toBe(rest.body.id);
      expect((await acme.graphql.ok(DoNotCallEntryDocument, { id: spelling })).doNotCallEntry.id).toBe(rest.body.id);
    }
    const csv = 'phone\n+4902012345678\n+492012345678\n+4402071234567\n+390612345678\n';
    const imported = await acme.rest.post('/api/do-not-call/import', { csv });
    expect(imported.status).toBe(200);
    expect(imported.body.added).toBe(2);
    expect(imported.body.skipped.map((row: { line: number; reason: string }) => [row.line, row.reason.split(' (')[0]])).toEqual([
      [3, 'repeats line 2'],
      [4, '+442071234567 is already on the do-not-call list'],
    ]);
    expect((await acme.rest.get(path('+4902012345678'))).body.phone).toBe('+492012345678');
    const { importDoNotCall } = await acme.graphql.ok(ImportDoNotCallDocument, { input: { csv: '+330612345678\n+33612345678\n+4402071234567\n' } });
    expect([importDoNotCall.added, importDoNotCall.skipped.map((row) => [row.line, row.phone])]).toEqual([
      1,
      [
        [2, '+33612345678'],
        [3, '+442071234567'],
      ],
    ]);
    // An Italian 0 is part of the number.
    expect((await acme.rest.get(path('+390612345678'))).body.phone).toBe('+390612345678');
    expect((await acme.rest.get(path('+39612345678'))).status).toBe(404);
    // Another organization: 404 in either spelling.
    expect((await other.rest.get(path('+4402071234567'))).status).toBe(404);
    expect((await acme.rest.delete(path('+4402071234567'))).status).toBe(204);
    expect((await acme.rest.get(path('+442071234567'))).status).toBe(404);
  });

  it('imports a file of several chunks (1000 rows each) with the same report as one: repeats and listed numbers across chunks', async () => {
    const org = await app.organization('Chunked DNC');
    const number = (i: number) => `+1303${String(5_000_000 + i)}`;
    await org.rest.post('/api/do-not-call', { phone: number(2400) }); // in the third chunk
    const lines = ['phone,note', ...Array.from({ length: 2500 }, (_, i) => `${number(i)},n${i}`)];
    lines[1500] = `${number(9)},again`; // line 1501 repeats line 11, a chunk later
    const res = await org.rest.post('/api/do-not-call/import', { csv: lines.join('\n') });
    expect(res.status).toBe(200);
    expect(res.body.added).toBe(2498);
    expect(res.body.rejected).toEqual([]);
    expect(res.body.skipped).toEqual([
      { line: 1501, phone: number(9), reason: 'repeats line 11' },
      { line: 2402, phone: number(2400), reason: expect.stringMatching(/is already on the do-not-call list \(manual, since /) },
    ]);
    expect((await org.rest.get('/api/do-not-call?limit=1')).body.meta.total).toBe(2499);
    expect((await org.rest.get(path(number(2499)))).body).toMatchObject({ source: 'import', note: 'n2499' });
  });

  it('another organization neither sees nor removes an entry (404 on both doors), and keeps a list of its own', async () => {
    const entry = await acme.rest.post('/api/do-not-call', { phone: '+14155550300' });
    expect(entry.status).toBe(201);
    expect((await other.rest.get(path('+14155550300'))).status).toBe(404);
    expect((await other.rest.get(`/api/do-not-call/${entry.body.id}`)).status).toBe(404);
    expect((await other.graphql.run(RemoveDoNotCallDocument, { id: entry.body.id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await other.rest.delete(path('+14155550300'))).status).toBe(404);
    expect((await other.graphql.run(DoNotCallEntryDocument, { id: '+14155550300' })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await other.graphql.run(RemoveDoNotCallDocument, { id: '+14155550300' })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await other.rest.get('/api/do-not-call')).body.meta.total).toBe(0);
    expect((await other.graphql.ok(DoNotCallEntriesDocument, {})).doNotCallEntries.meta.total).toBe(0);
    // The same number on the other organization's own list is its own entry.
    expect((await other.rest.post('/api/do-not-call', { phone: '+14155550300' })).status).toBe(201);
    expect((await acme.rest.get(path('+14155550300'))).body.organizationId).toBe(acme.organizationId);
  });

  it('lets a member read the list but not change it, on both doors', async () => {
    const member = await addUser(app, acme, 'member');
    expect((await member.rest.get('/api/do-not-call')).status).toBe(200);
    expect((await member.graphql.ok(DoNotCallEntriesDocument, {})).doNotCallEntries.meta.total).toBeGreaterThan(0);
    const rest = await member.rest.post('/api/do-not-call', { phone: '+14155550400' });
    const gql = await member.graphql.run(AddDoNotCallDocument, { input: { phone: '+14155550400' } });
    expect([rest.status, rest.body.code, gql.errors?.[0]?.extensions.code]).toEqual([403, 'FORBIDDEN', 'FORBIDDEN']);
  });
});
