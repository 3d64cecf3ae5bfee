import {
  CancelContactImportDocument,
  ContactImportDocument,
  ContactImportsDocument,
  CreateContactImportDocument,
  ResumeContactImportDocument,
} from '../generated/graphql.js';
import { parse } from 'csv-parse/sync';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { TEST_DATABASE_URL } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { ChunkBeforeFailed, writeImportChunk, type ClaimedImport } from '../../src/modules/contacts/contact-import-chunk.js';
import type { ImportRow } from '../../src/modules/contacts/contact-import-rows.js';

// CSV import jobs (issue 42) through both doors, on PGlite and (TEST_DATABASE_URL) PostgreSQL. Each
// import is waited for by the worker going idle, never by time; the rate is the bench's (--only=scale).

const BOM = '\ufeff';

/** Sends a CSV body as the CRM export would be sent: text/csv, with the organization's key. */
async function sendCsv(app: TestApp, org: TestOrganization, method: string, path: string, csv: string, type = 'text/csv') {
  const response = await fetch(`${app.baseUrl}${path}`, { method, headers: { 'x-api-key': org.apiKey, 'content-type': type }, body: csv });
  return { status: response.status, body: (await response.json()) as any };
}

/** Rows of a simple file: phone +1415555xxxx from `from`, a name, and a tier. */
function rows(count: number, from = 0, extra = ''): string {
  return Array.from({ length: count }, (_, i) => `+1415${String(5_000_000 + from + i).padStart(7, '0')},Person ${from + i},gold${extra}`).join('\r\n');
}

describe('CSV import jobs', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp({ contactImports: { maxBytes: 1_500_000, maxRows: 2000 } });
    acme = await app.organization('Acme');
    other = await app.organization('Other');
  });
  afterAll(() => app.close());

  const worker = () => app.gateway.services.contactImportWorker;
  const finished = async (org: TestOrganization, id: string) => {
    await worker().idle();
    return (await org.rest.get(`/api/imports/${id}`)).body;
  };
  const refusedCsv = async (org: TestOrganization, id: string) => {
    const response = await fetch(`${app.baseUrl}/api/imports/${id}/refused`, { headers: { 'x-api-key': org.apiKey } });
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    return parse(await response.text(), { relax_column_count: true }) as string[][];
  };
  const contactsByPhone = async (org: TestOrganization, search: string) =>
    (await org.rest.get(`/api/contacts?search=${encodeURIComponent(search)}&limit=100`)).body.data as Record<string, any>[];

  it('imports a CRM export: bad rows refused with their number and reason, the rest written, an audience joined, events told', async () => {
    const audience = await acme.rest.post('/api/audience', { name: 'Weekly export' });
    await acme.rest.post('/api/do-not-call', { phone: '+14155550107' });
    const csv =
      `${BOM}externalId,name,phone,timeZone,attributes.tier\r\n` +
      'crm-1,Ada,+14155550101,Europe/London,gold\r\n' +
      'crm-2,"Grace, ""Amazing""\nHopper",+14155550102,America/New_York,silver\r\n' + // a quoted comma, quote and newline
      'crm-3,Bad phone,555-0103,,gold\r\n' +
      'crm-4,Bad zone,+14155550104,Mars/Olympus,gold\r\n' +
      'crm-5,=HYPERLINK("http://evil"),+14155550105,,gold\r\n' +
      'crm-6,Repeat,+14155550101,,gold\r\n' + // the phone of row 2
      'crm-7,Short row,+14155550106\r\n' +
      'crm-8,On the list,+14155550107,,bronze\r\n';
    const sent = await sendCsv(app, acme, 'POST', `/api/imports?mode=upsert&audienceId=${audience.body.id}`, csv);
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ status: 'queued', mode: 'upsert', key: 'phone', fileBytes: Buffer.byteLength(csv) });
    const job = await finished(acme, sent.body.id);
    expect(job).toMatchObject({ status: 'completed', rowsRead: 8, imported: 3, updated: 0, skipped: 0, refused: 5, doNotCall: 1, error: null });
    expect(job.columns).toEqual(['externalId', 'name', 'phone', 'timeZone', 'attributes.tier']);

    const refused = await refusedCsv(acme, job.id);
    expect(refused[0]).toEqual(['row', 'reason', 'externalId', 'name', 'phone', 'timeZone', 'attributes.tier']);
    // Rows as a spreadsheet numbers them: the header is 1, and Grace's quoted line break keeps her one row (3).
    expect(refused.slice(1).map((line) => line.slice(0, 2))).toEqual([
      ['4', 'phone "555-0103" is not E.164 (+ and 7 to 15 digits)'],
      ['5', 'timeZone "Mars/Olympus" is not an IANA time zone (for example Europe/Paris)'],
      ['6', 'name starts with "=": a spreadsheet formula is not imported'],
      ['7', 'phone repeats row 2'],
      ['8', 'The row has 3 cells; the header has 5'],
    ]);
    expect(refused[3]).toEqual(['6', expect.any(String), 'crm-5', `'=HYPERLINK("http://evil")`, '+14155550105', '', 'gold']); // text, never run by a spreadsheet
    expect(refused[1]!.slice(2)).toEqual(['crm-3', 'Bad phone', '555-0103', '', 'gold']);

    const [grace] = await contactsByPhone(acme, '+14155550102');
    expect(grace).toMatchObject({
      name: 'Grace, "Amazing"\nHopper',
      externalId: 'crm-2',
      timeZone: 'America/New_York',
      attributes: { tier: 'silver' },
      optedOut: false,
    });
    const [listed] = await contactsByPhone(acme, '+14155550107');
    expect(listed).toMatchObject({ optedOut: true, externalId: 'crm-8' });
    expect((await acme.rest.get(`/api/audience/${audience.body.id}`)).body.contactCount).toBe(3);

    const events = await acme.rest.get('/api/events?type=import.completed');
    expect(events.body.data.map((event: { payload: { id: string } }) => event.payload.id)).toContain(job.id);
  });

  it('re-imports the week’s export keyed on externalId: upsert updates what it is given, skip leaves, create refuses all', async () => {
    const first = 'externalId,name,phone,attributes.tier,attributes.region\r\nw-1,Ann,+14155551001,gold,west\r\nw-2,Bob,+14155551002,silver,east\r\n';
    const created = await sendCsv(app, acme, 'POST', '/api/imports?key=externalId', first);
    expect(await finished(acme, created.body.id)).toMatchObject({ status: 'completed', imported: 2 });

    // Ann's number changed in the CRM and her tier; Bob's name is blank (not given); Cy is new.
    const week2 = 'externalId,name,phone,attributes.tier\r\nw-1,Ann B,+14155551011,platinum\r\nw-2,,+14155551002,gold\r\nw-3,Cy,+14155551003,gold\r\n';
    const upsert = await sendCsv(app, acme, 'POST', '/api/imports?key=externalId&mode=upsert', week2);
    expect(await finished(acme, upsert.body.id)).toMatchObject({ status: 'completed', imported: 1, updated: 2, refused: 0 });
    const [ann] = await contactsByPhone(acme, '+14155551011');
    expect(ann).toMatchObject({ externalId: 'w-1', name: 'Ann B', attributes: { tier: 'platinum', region: 'west' } });
    const [bob] = await contactsByPhone(acme, '+14155551002');
    expect(bob).toMatchObject({ name: 'Bob', attributes: { tier: 'gold', region: 'east' } });

    const skip = await sendCsv(app, acme, 'POST', '/api/imports?key=externalId&mode=skip', week2);
    expect(await finished(acme, skip.body.id)).toMatchObject({ status: 'completed', imported: 0, updated: 0, skipped: 3 });

    const before = (await acme.rest.get('/api/contacts?limit=1')).body.meta.total;
    const create = await sendCsv(app, acme, 'POST', '/api/imports?key=externalId&mode=create', `${week2}w-4,Dee,+14155551004,gold\r\n`);
    const failed = await finished(acme, create.body.id);
    expect(failed).toMatchObject({ status: 'failed', imported: 0, refused: 3 });
    expect(failed.error).toMatch(/all or nothing/);
    expect((await acme.rest.get('/api/contacts?limit=1')).body.meta.total).toBe(before); // Dee was written, then undone
    expect(await contactsByPhone(acme, '+14155551004')).toEqual([]);
  });

  it('is created on GraphQL, sent its file by PUT, read on both doors; another organization gets 404', async () => {
    const created = await acme.graphql.ok(CreateContactImportDocument, { input: { mode: 'skip' as never } });
    const job = created.createContactImport;
    expect(job).toMatchObject({ status: 'awaiting_file', mode: 'skip', key: 'phone', uploadUrl: `/api/imports/${job.id}/file` });

    expect((await sendCsv(app, other, 'PUT', job.uploadUrl, 'phone\r\n+14155552001\r\n')).status).toBe(404);
    const put = await sendCsv(app, acme, 'PUT', job.uploadUrl, 'phone\r\n+14155552001\r\n');
    expect(put.status).toBe(202);
    expect((await sendCsv(app, acme, 'PUT', job.uploadUrl, 'phone\r\n+14155552002\r\n')).body.code).toBe('CONFLICT'); // one file per import
    await worker().idle();
    const read = await acme.graphql.ok(ContactImportDocument, { id: job.id });
    expect(read.contactImport).toMatchObject({ status: 'completed', imported: 1 });
    const rest = await acme.rest.get(`/api/imports/${job.id}`);
    expect(rest.body).toMatchObject(read.contactImport);

    for (const path of [`/api/imports/${job.id}`, `/api/imports/${job.id}/refused`]) expect((await other.rest.get(path)).status).toBe(404);
    expect((await other.rest.post(`/api/imports/${job.id}/cancel`)).status).toBe(404);
    expect((await other.graphql.run(ContactImportDocument, { id: job.id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await other.graphql.run(CancelContactImportDocument, { id: job.id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    const page = await other.graphql.ok(ContactImportsDocument, { limit: 10 });
    expect(page.contactImports.data).toEqual([]);

    // An audience of another organization: 404 on both doors, nothing created.
    const theirs = await other.rest.post('/api/audience', { name: 'Theirs' });
    expect((await sendCsv(app, acme, 'POST', `/api/imports?audienceId=${theirs.body.id}`, 'phone\r\n+14155552003\r\n')).status).toBe(404);
    expect((await acme.graphql.run(CreateContactImportDocument, { input: { audienceId: theirs.body.id } })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });

  it('pages the imports by cursor, newest first', async () => {
    const first = await acme.rest.get('/api/imports?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(2);
    const next = await acme.rest.get(`/api/imports?limit=2&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`);
    expect(next.body.data[0].id).not.toBe(first.body.data[1].id);
    expect(new Date(next.body.data[0].createdAt) <= new Date(first.body.data[1].createdAt)).toBe(true);
    const gql = await acme.graphql.ok(ContactImportsDocument, { limit: 2, cursor: first.body.meta.nextCursor });
    expect(gql.contactImports.data.map((each) => each.id)).toEqual(next.body.data.map((each: { id: string }) => each.id));
  });

  it('answers the same bad input with the same error on both doors', async () => {
    const rest = await sendCsv(app, acme, 'POST', '/api/imports?audienceId=nope', 'phone\r\n+14155553001\r\n');
    expect([rest.status, rest.body.code]).toEqual([400, 'BAD_USER_INPUT']);
    const gql = await acme.graphql.run(CreateContactImportDocument, { input: { audienceId: 'nope' } });
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(gql.errors?.[0]?.extensions.errors).toEqual(rest.body.errors);
  });

  it('holds its bounds: file size (413, nothing kept), rows, columns, the media type, a header it cannot map', async () => {
    const imports = async () => (await acme.rest.get('/api/imports?limit=100')).body.meta.total;
    const before = await imports();
    const tooLarge = await sendCsv(app, acme, 'POST', '/api/imports', `phone,name,attributes.tier\r\n${rows(60_000)}\r\n`);
    expect([tooLarge.status, tooLarge.body.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    expect(await imports()).toBe(before);
    const json = await sendCsv(app, acme, 'POST', '/api/imports', '{"phone":"+14155550100"}', 'application/json');
    expect([json.status, json.body.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);

    const tooMany = await sendCsv(app, acme, 'POST', '/api/imports', `phone,name,attributes.tier\r\n${rows(2001, 10_000)}\r\n`);
    const cut = await finished(acme, tooMany.body.id);
    expect(cut).toMatchObject({ status: 'failed', rowsRead: 2000, imported: 2000 });
    expect(cut.error).toMatch(/more than 2000 rows/);

    const cases: [string, RegExp][] = [
      ['name;phone\r\n"A";+14155553002\r\n', /one column .*separated by commas/],
      ['phone,email\r\n+14155553003,a@example.test\r\n', /Unknown columns: email/],
      [`${Array.from({ length: 101 }, (_, i) => `attributes.k${i}`).join(',')}\r\n`, /101 columns/],
      ['phone,name\r\n+14155553004,"never closed\r\n+14155553005,B\r\n', /quote .* never closed/],
      [`phone,name\r\n+14155553006,Before\r\n+14155553007,${'x'.repeat(1_100_000)}\r\n`, /longer than 1048576 bytes .*the rows before it were imported/],
    ];
    for (const [csv, error] of cases) {
      const sent = await sendCsv(app, acme, 'POST', '/api/imports', csv);
      expect(sent.status).toBe(202);
      const ended = await finished(acme, sent.body.id);
      expect(ended.status).toBe('failed');
      expect(ended.error).toMatch(error);
    }
    expect(await contactsByPhone(acme, '+14155553006')).toHaveLength(1); // the row before the long one
  });

  it('takes the file compressed (gzip, deflate, br), counts its bounds decoded, and names a body that does not decode', async () => {
    const send = async (body: Buffer | string, coding: string, path = '/api/imports') => {
      const response = await fetch(`${app.baseUrl}${path}`, {
        method: path === '/api/imports' ? 'POST' : 'PUT',
        headers: { 'x-api-key': acme.apiKey, 'content-type': 'text/csv', 'content-encoding': coding },
        body,
      });
      return { status: response.status, headers: response.headers, body: (await response.json()) as any };
    };
    const codings: [string, (csv: Buffer) => Buffer][] = [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ];
    for (const [index, [coding, compress]] of codings.entries()) {
      const csv = `phone,name,attributes.tier\r\n${rows(300, 50_000 + index * 1000)}\r\n`;
      const sent = await send(compress(Buffer.from(csv)), coding);
      expect([coding, sent.status]).toEqual([coding, 202]);
      const ended = await finished(acme, sent.body.id);
      expect([coding, ended.status, ended.imported, ended.refused]).toEqual([coding, 'completed', 300, 0]);
      // The stored size is the decoded file's.
      expect(ended.fileBytes).toBe(Buffer.byteLength(csv));
    }
    expect(await contactsByPhone(acme, '+14155050299')).toHaveLength(1);

    const imports = async () => (await acme.rest.get('/api/imports?limit=100')).body.meta.total;
    const before = await imports();
    // 60,000 rows are some 2.3 MB decoded, over the 1.5 MB limit, and a few kilobytes compressed: 413, nothing kept.
    const bomb = await send(gzipSync(Buffer.from(`phone,name,attributes.tier\r\n${rows(60_000)}\r\n`)), 'gzip');
    expect([bomb.status, bomb.body.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    const broken = await send(Buffer.from('this is no gzip stream at all'), 'gzip');
    expect([broken.status, broken.body.code, broken.body.errors]).toEqual([
      400,
      'BAD_USER_INPUT',
      [{ field: 'body', message: 'The body does not decode as its Content-Encoding (gzip) says' }],
    ]);
    const zstd = await send('phone\r\n+14155553999\r\n', 'zstd');
    expect([zstd.status, zstd.body.code, zstd.headers.get('accept-encoding')]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE', 'gzip, deflate, br']);
    expect(await imports()).toBe(before);

    // The same on the file of an import created on the other door, and another organization's import is theirs alone.
    const created = await acme.graphql.ok(CreateContactImportDocument, { input: {} });
    const id = created.createContactImport.id;
    const theirs = await fetch(`${app.baseUrl}/api/imports/${id}/file`, {
      method: 'PUT',
      headers: { 'x-api-key': other.apiKey, 'content-type': 'text/csv', 'content-encoding': 'gzip' },
      body: gzipSync(Buffer.from('phone\r\n+14155554000\r\n')),
    });
    expect(theirs.status).toBe(404);
    const broken2 = await send(Buffer.from('no gzip'), 'gzip', `/api/imports/${id}/file`);
    expect([broken2.status, broken2.body.code]).toEqual([400, 'BAD_USER_INPUT']);
    const put = await send(gzipSync(Buffer.from('phone,name\r\n+14155554001,Zed\r\n')), 'gzip', `/api/imports/${id}/file`);
    expect(put.status).toBe(202);
    expect(await finished(acme, id)).toMatchObject({ status: 'completed', imported: 1 });
  });

  it('writes two chunks at once on PostgreSQL, decided as one after the other: a contact the chunk before changes, a key it wrote', async () => {
    // Ivy (lane-c) has +14155579001. Chunk 2 of the upsert moves her to +14155579002; chunk 3 gives +14155579001 to
    // a new contact, which is free only once chunk 2 has committed; row 1501 (chunk 4) takes the phone row 1200 (chunk 3) created.
    const seeded = await sendCsv(app, acme, 'POST', '/api/imports?key=externalId', 'externalId,name,phone\r\nlane-c,Ivy,+14155579001\r\n');
    expect(await finished(acme, seeded.body.id)).toMatchObject({ status: 'completed', imported: 1 });
    const phone = (row: number) => `+1415571${String(row).padStart(4, '0')}`;
    const lines = Array.from({ length: 2000 }, (_, i) => {
      const row = i + 1;
      if (row === 501) return 'lane-c,Ivy moved,+14155579002';
      if (row === 1001) return 'lane-new,Newcomer,+14155579001';
      if (row === 1501) return `lane-late,Late,${phone(1200)}`;
      return `lane-${row},Person ${row},${phone(row)}`;
    });
    const { createContactImport: job } = await acme.graphql.ok(CreateContactImportDocument, { input: { key: 'externalId' as never, mode: 'upsert' as never } });
    let chunks = 0;
    worker().onChunk = async (id) => {
      if (id !== job.id || ++chunks !== 1) return;
      // Chunk 1 committed, its hook running: on PostgreSQL chunk 2 is written beside it (its rows in a
      // transaction of their own, waiting to commit after this), and nothing of it is seen yet.
      if (TEST_DATABASE_URL) {
        await eventually(
          () =>
            app.sql<{ count: number }>(
              `select count(*)::int as count from pg_stat_activity
                where datname = current_database() and state = 'idle in transaction' and backend_xid is not null`,
            ),
          ([row]) => Number(row!.count) >= 1,
          { what: 'the second chunk written beside the first' },
        );
      }
      expect((await acme.rest.get(`/api/imports/${id}`)).body).toMatchObject({ rowsRead: 500, imported: 500, updated: 0 });
      expect((await contactsByPhone(acme, '+14155579001'))[0]).toMatchObject({ externalId: 'lane-c', name: 'Ivy' });
    };
    try {
      await sendCsv(app, acme, 'PUT', job.uploadUrl, `externalId,name,phone\r\n${lines.join('\r\n')}\r\n`);
      expect(await finished(acme, job.id)).toMatchObject({ status: 'completed', rowsRead: 2000, imported: 1998, updated: 1, refused: 1 });
    } finally {
      worker().onChunk = null;
    }
    expect(chunks).toBe(4);
    expect((await contactsByPhone(acme, '+14155579002'))[0]).toMatchObject({ externalId: 'lane-c', name: 'Ivy moved' });
    expect((await contactsByPhone(acme, '+14155579001'))[0]).toMatchObject({ externalId: 'lane-new', name: 'Newcomer' });
    const refused = await refusedCsv(acme, job.id);
    expect(refused.slice(1).map((cells) => [cells[0], cells[1]])).toEqual([['1502', expect.stringMatching(/^phone \+14155711200 belongs to another contact/)]]);
    // The organization's count of contacts (kept by the chunks themselves while two are written at once) is its contacts.
    const [{ counted, real }] = await app.sql<{ counted: number; real: number }>(
      `select (select contacts from organization_contact_counts where organization_id = ?) as counted,
              (select count(*)::int from contacts where organization_id = ?) as real`,
      [acme.organizationId, acme.organizationId],
    );
    expect(Number(counted)).toBe(Number(real));
  });

  (TEST_DATABASE_URL ? it : it.skip)(
    'a chunk beside the one before it decides after it on a contact both found, and never commits ahead of it (PostgreSQL)',
    async () => {
      // Jo has +14155579101; the chunk before moves her (here, a statement of the test's own), and this chunk gives her old number to b-new.
      const seeded = await sendCsv(app, acme, 'POST', '/api/imports?key=externalId', 'externalId,name,phone\r\nb-jo,Jo,+14155579101\r\n');
      expect(await finished(acme, seeded.body.id)).toMatchObject({ status: 'completed', imported: 1 });
      const [jo] = await contactsByPhone(acme, '+14155579101');
      const { createContactImport: created } = await acme.graphql.ok(CreateContactImportDocument, {
        input: { key: 'externalId' as never, mode: 'upsert' as never },
      });
      // Running, its lease held by this test rather than the worker.
      await app.sql(`update contact_imports set status = 'running', lease_until = now() + interval '1 hour' where id = ?`, [created.id]);
      const job: ClaimedImport = { id: created.id, organization_id: acme.organizationId, mode: 'upsert', key: 'externalId', audience_id: null, rows_read: 0 };
      const row = (n: number, externalId: string, phone: string): ImportRow => ({
        row: n,
        externalId,
        name: externalId,
        phone,
        timeZone: null,
        attributes: {},
        cells: [],
      });
      const em = () => app.db.database.em.fork();

      // The chunk's look-up finds Jo, whom the chunk before may change: it waits for that one's commit and looks again.
      let lookedUp!: () => void;
      const hasLookedUp = new Promise<void>((resolve) => (lookedUp = resolve));
      let found!: (ids: ReadonlySet<string>) => void;
      const foundPromise = new Promise<ReadonlySet<string>>((resolve) => (found = resolve));
      let committed!: (ok: boolean) => void;
      const committedPromise = new Promise<boolean>((resolve) => (committed = resolve));
      const writing = em().transactional((tx) =>
        writeImportChunk(tx, job, [row(2, 'b-new', '+14155579101')], false, {
          // A thenable: told when the chunk, its look-up done, waits on what the one before it found.
          found: { then: (done: never, failed: never) => (lookedUp(), foundPromise.then(done, failed)) } as unknown as Promise<ReadonlySet<string>>,
          committed: () => committedPromise,
        }),
      );
      await hasLookedUp;
      await app.sql(`update contacts set phone = '+14155579102' where id = ?`, [jo!.id]);
      found(new Set([jo!.id]));
      committed(true);
      expect(await writing).toBe(true);
      expect((await contactsByPhone(acme, '+14155579101'))[0]).toMatchObject({ externalId: 'b-new' });
      expect((await app.sql<{ rows_read: number }>('select rows_read from contact_imports where id = ?', [job.id]))[0]!.rows_read).toBe(1);

      // The chunk before fails: this one, written beside it, is rolled back, its counts and contacts with it.
      await expect(
        em().transactional((tx) =>
          writeImportChunk(tx, job, [row(3, 'b-after', '+14155579103')], false, {
            found: Promise.resolve(new Set<string>()),
            committed: () => Promise.reject(new ChunkBeforeFailed('the chunk before failed')),
          }),
        ),
      ).rejects.toBeInstanceOf(ChunkBeforeFailed);
      expect(await contactsByPhone(acme, '+14155579103')).toEqual([]);
      expect((await app.sql<{ rows_read: number }>('select rows_read from contact_imports where id = ?', [job.id]))[0]!.rows_read).toBe(1);
      await app.sql(`update contact_imports set status = 'cancelled', lease_until = null where id = ?`, [job.id]);
    },
  );

  it('cancels halfway (what was written stays, counted) and resumes from the first row not counted', async () => {
    const { createContactImport: job } = await acme.graphql.ok(CreateContactImportDocument, {});
    let cancelled = false;
    worker().onChunk = async (id) => {
      if (cancelled || id !== job.id) return;
      cancelled = true;
      expect((await acme.graphql.ok(CancelContactImportDocument, { id })).cancelContactImport.status).toBe('cancelled');
    };
    try {
      const sent = await sendCsv(app, acme, 'PUT', job.uploadUrl, `phone,name,attributes.tier\r\n${rows(1200, 20_000)}\r\n`);
      const stopped = await finished(acme, sent.body.id);
      expect(stopped).toMatchObject({ status: 'cancelled', rowsRead: 500, imported: 500 });
      expect((await acme.rest.get('/api/events?type=import.cancelled')).body.data[0].payload).toMatchObject({ id: sent.body.id });
      expect((await acme.rest.post(`/api/imports/${sent.body.id}/cancel`)).status).toBe(409); // ended
      const resumed = await acme.graphql.ok(ResumeContactImportDocument, { id: sent.body.id });
      expect(resumed.resumeContactImport.status).toBe('queued');
      expect(await finished(acme, sent.body.id)).toMatchObject({ status: 'completed', rowsRead: 1200, imported: 1200, refused: 0 });
      expect((await acme.rest.get('/api/contacts?search=%2B1415502&limit=1')).body.meta.total).toBe(1200); // each row once
    } finally {
      worker().onChunk = null;
    }
  });

  it('cancels a create import at once (cancelling); the worker deletes its contacts a chunk at a time, resuming after a stop', async () => {
    const { createContactImport: job } = await acme.graphql.ok(CreateContactImportDocument, { input: { mode: 'create' } });
    const contactsOf = async () =>
      Number((await app.sql<{ count: number }>('select count(*)::int as count from contacts where import_id = ?', [job.id]))[0]!.count);
    let chunks = 0;
    let cancelling: any = null;
    worker().onChunk = async (id) => {
      if (id !== job.id) return;
      chunks++;
      if (chunks === 2) {
        // Two chunks written (1,000 contacts): the cancel answers without deleting them.
        cancelling = (await acme.graphql.ok(CancelContactImportDocument, { id })).cancelContactImport;
        expect(await contactsOf()).toBe(1000);
      } else if (chunks === 3) {
        // The first chunk of the undo is deleted; the process stops here.
        worker().onChunk = null;
        void worker().stop();
      }
    };
    try {
      await sendCsv(
        app,
        acme,
        'PUT',
        job.uploadUrl,
        `phone,name,attributes.tier
${rows(1800, 60_000)}
`,
      );
      await worker().idle();
    } finally {
      worker().onChunk = null;
    }
    expect(cancelling).toMatchObject({ status: 'cancelling', rowsRead: 1000, imported: 1000 });
    expect((await acme.rest.get(`/api/imports/${job.id}`)).body).toMatchObject({ status: 'cancelling', rowsRead: 1000, imported: 500 });
    expect(await contactsOf()).toBe(500);
    // Being undone: a second cancel is a conflict on both doors, and so is a resume.
    const again = await acme.rest.post(`/api/imports/${job.id}/cancel`);
    expect([again.status, again.body.code, again.body.detail]).toEqual([409, 'CONFLICT', expect.stringMatching(/being cancelled/)]);
    expect((await acme.graphql.run(CancelContactImportDocument, { id: job.id })).errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect((await acme.rest.post(`/api/imports/${job.id}/resume`)).status).toBe(409);
    expect((await other.rest.post(`/api/imports/${job.id}/cancel`)).status).toBe(404);

    // The next start frees what the stopped process held; the worker deletes the rest.
    await app.gateway.services.contactImports.releaseAll();
    worker().start();
    expect(await finished(acme, job.id)).toMatchObject({ status: 'cancelled', rowsRead: 1000, imported: 0 });
    expect(await contactsOf()).toBe(0);
    const events = (await acme.rest.get('/api/events?limit=100')).body.data.filter((event: any) => event.payload.id === job.id);
    expect(events.map((event: any) => [event.type, event.payload.status])).toEqual([
      ['import.cancelled', 'cancelled'],
      ['import.progress', 'cancelling'],
    ]);
  });

  it('resumes after the process stops mid-import: nothing lost, nothing counted twice', async () => {
    const sent = await (async () => {
      worker().onChunk = () => {
        worker().onChunk = null;
        void worker().stop(); // the process stops: the job is left running, its lease held
      };
      return sendCsv(app, acme, 'POST', '/api/imports', `phone,name,attributes.tier\r\n${rows(1200, 30_000)}\r\n`);
    })();
    await worker().idle();
    expect((await acme.rest.get(`/api/imports/${sent.body.id}`)).body).toMatchObject({ status: 'running', rowsRead: 500, imported: 500 });
    // The next start on the embedded database (main.ts) frees what the last process held, and the worker claims it.
    await app.gateway.services.contactImports.releaseAll();
    worker().start();
    const done = await finished(acme, sent.body.id);
    expect(done).toMatchObject({ status: 'completed', rowsRead: 1200, imported: 1200, refused: 0 });
    const [{ count }] = await app.sql<{ count: string }>('select count(*)::int as count from contacts where import_id = ?', [sent.body.id]);
    expect(Number(count)).toBe(1200);
  });

  it('ends failed after stopping three times on an error of the server, and resumes when asked', async () => {
    const { createContactImport: job } = await acme.graphql.ok(CreateContactImportDocument, {});
    worker().onChunk = (id) => {
      if (id === job.id) throw new Error('the database went away');
    };
    try {
      // Each run writes one chunk, then stops on the error; the next resumes after it.
      await sendCsv(app, acme, 'PUT', job.uploadUrl, `phone,name,attributes.tier\r\n${rows(2000, 40_000)}\r\n`);
      for (let stop = 1; stop < 3; stop++) {
        await worker().idle();
        expect((await acme.rest.get(`/api/imports/${job.id}`)).body).toMatchObject({ status: 'running', rowsRead: 500 * stop });
        await app.gateway.services.contactImports.releaseAll(); // as if its lease had run out
        worker().wake();
      }
      const failed = await finished(acme, job.id);
      expect(failed).toMatchObject({ status: 'failed', rowsRead: 1500, imported: 1500 });
      expect(failed.error).toMatch(/stopped 3 times on an error of the server/);
    } finally {
      worker().onChunk = null;
    }
    expect((await acme.rest.post(`/api/imports/${job.id}/resume`)).status).toBe(200);
    expect(await finished(acme, job.id)).toMatchObject({ status: 'completed', rowsRead: 2000, imported: 2000 });
  });
});
