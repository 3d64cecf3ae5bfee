import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { recordStatements } from '../helpers/users.js';
import { campaignWithExecution, insertCall, type Campaign } from './call-seed.js';

const COLUMNS = ['contactId', 'phone', 'contactStatus', 'attempts', 'lastCallId', 'lastCallStatus', 'outcome', 'queuedAt', 'answeredAt', 'endedAt', 'durationSeconds', 'errorText', 'creditsCharged'];
const T0 = new Date('2026-11-20T09:00:00.000Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

/** An RFC 4180 reader: quoted fields with doubled quotes and line breaks, CRLF records. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      record.push(field);
      field = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 1;
    } else field += char;
  }
  if (field !== '' || record.length > 0) throw new Error(`the CSV does not end with CRLF: ${JSON.stringify(text.slice(-80))}`);
  return records;
}

let app: TestApp;
let a: TestOrganization;
let b: TestOrganization;
let campaign: Campaign;

beforeAll(async () => {
  // A small answer cap: the CSV goes past it, a JSON answer could not.
  app = await startTestApp({ responseMaxBytes: 64 * 1024 });
  a = await app.organization('CSV A');
  b = await app.organization('CSV B');
  campaign = await campaignWithExecution(app, a, 3);
}, 120_000);
afterAll(() => app?.close());

const csvOf = (org: TestOrganization, executionId: string) => fetch(`${app.baseUrl}/api/executions/${executionId}/calls.csv`, { headers: { 'x-api-key': org.apiKey } });

describe('GET /api/executions/{id}/calls.csv', () => {
  it('one row per contact, called or not, with its last call; quoted by RFC 4180 and formula cells neutralized', async () => {
    const [c1, c2, c3] = campaign.contactIds as [string, string, string];
    const row = (contactId: string) => campaign.queueRows.get(contactId);
    const base = { organizationId: a.organizationId, executionId: campaign.executionId, programId: campaign.programId };
    await insertCall(app, { ...base, contactId: c1, executionContactId: row(c1), attempt: 1, status: 'no_answer', outcome: 'no_answer', queuedAt: at(0) });
    const last1 = await insertCall(app, {
      ...base, contactId: c1, executionContactId: row(c1), attempt: 2, status: 'completed', outcome: 'answered', queuedAt: at(30), answeredAt: at(30.1),
      endedAt: at(31), durationSeconds: 54, creditsCharged: 1,
    });
    // A later-queued call of a lower attempt is not the last one.
    await insertCall(app, { ...base, contactId: c1, executionContactId: row(c1), attempt: 1, status: 'failed', queuedAt: at(40) });
    const last2 = await insertCall(app, { ...base, contactId: c2, executionContactId: row(c2), status: 'failed', outcome: 'failed', errorText: '=HYPERLINK("http://evil.example","click"), then\r\nmore', queuedAt: at(5) });
    // Another organization's call naming this execution's contact is not its row.
    await insertCall(app, { ...base, organizationId: b.organizationId, contactId: c3, executionContactId: row(c3), status: 'completed', queuedAt: at(60) });
    await app.sql(`update execution_contacts set status = 'completed', attempts = 2 where id = ?`, [row(c1)]);
    await app.sql(`update execution_contacts set status = 'failed', attempts = 1 where id = ?`, [row(c2)]);

    const res = await csvOf(a, campaign.executionId);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="execution-${campaign.executionId}-calls.csv"`);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-length')).toBeNull();
    const text = await res.text();
    expect(text).toContain('"\'=HYPERLINK(""http://evil.example"",""click""), then\r\nmore"');
    const [header, ...rows] = parseCsv(text);
    expect(header).toEqual(COLUMNS);
    const byContact = Object.fromEntries(rows.map((cells) => [cells[0], Object.fromEntries(COLUMNS.map((column, i) => [column, cells[i]]))]));
    expect(rows).toHaveLength(3);
    const phones = await app.sql<{ contact_id: string; phone: string }>('select contact_id, phone from execution_contacts where execution_id = ?', [campaign.executionId]);
    const phoneOf = Object.fromEntries(phones.map((p) => [p.contact_id, p.phone]));
    expect(byContact[c1]).toEqual({
      contactId: c1, phone: phoneOf[c1], contactStatus: 'completed', attempts: '2', lastCallId: last1, lastCallStatus: 'completed', outcome: 'answered',
      queuedAt: at(30).toISOString(), answeredAt: at(30.1).toISOString(), endedAt: at(31).toISOString(), durationSeconds: '54', errorText: '', creditsCharged: '1',
    });
    expect(byContact[c2]).toMatchObject({ lastCallId: last2, lastCallStatus: 'failed', contactStatus: 'failed', errorText: '\'=HYPERLINK("http://evil.example","click"), then\r\nmore', creditsCharged: '0' });
    expect(byContact[c3]).toEqual({
      contactId: c3, phone: phoneOf[c3], contactStatus: 'pending', attempts: '0', lastCallId: '', lastCallStatus: '', outcome: '',
      queuedAt: '', answeredAt: '', endedAt: '', durationSeconds: '', errorText: '', creditsCharged: '',
    });
  });

  it('another organization’s execution, an unknown id and a malformed id answer 404 problem+json before any CSV', async () => {
    for (const id of [campaign.executionId, '00000000-0000-4000-8000-000000000000', 'nope']) {
      const res = await csvOf(b, id);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await res.json()) as { code: string }).code).toBe('NOT_FOUND');
    }
    // The REST client checks the answers against /api/openapi.json: the CSV is documented as text/csv.
    const documented = await a.rest.get(`/api/executions/${campaign.executionId}/calls.csv`);
    expect(documented.status).toBe(200);
  });

  it('streams thousands of rows complete, past RESPONSE_MAX_BYTES, reading them page by page', async () => {
    const big = await app.organization('CSV big');
    const seeded = await campaignWithExecution(app, big, 1);
    const rows = 3000;
    await app.sql(
      `insert into execution_contacts (id, created_at, updated_at, organization_id, execution_id, contact_id, phone, status, attempts, reached_node_ids)
       select gen_random_uuid(), now(), now(), ?, ?, null, '+1415' || lpad(n::text, 7, '0'), 'completed', 1, '[]'::jsonb from generate_series(1, ?) n`,
      [big.organizationId, seeded.executionId, rows],
    );
    await app.sql(
      `insert into calls (id, created_at, updated_at, organization_id, execution_id, execution_contact_id, direction, to_number, status, outcome, attempt, carrier, queued_at, reached_node_ids, error_text, credits_charged)
       select gen_random_uuid(), now(), now(), ec.organization_id, ec.execution_id, ec.id, 'outbound', ec.phone, 'completed', 'answered', 1, 'simulator', now(), '[]'::jsonb, '-' || ec.phone, 1
       from execution_contacts ec where ec.execution_id = ? and ec.contact_id is null`,
      [seeded.executionId],
    );
    let text = '';
    const csvStatements = await recordStatements(app, async () => {
      const res = await csvOf(big, seeded.executionId);
      expect(res.status).toBe(200);
      expect(res.headers.get('transfer-encoding')).toBe('chunked');
      text = await res.text();
    });
    expect(Buffer.byteLength(text)).toBeGreaterThan(app.config.responseMaxBytes);
    const records = parseCsv(text);
    expect(records).toHaveLength(rows + 2); // the header, the contact made through the API, the 3000
    const ids = new Set(records.slice(1).map((cells) => cells[4]));
    expect(ids.size).toBe(rows + 1); // every seeded call once (and one empty lastCallId)
    expect(records.filter((cells) => cells[11]?.startsWith("'-+1415"))).toHaveLength(rows);
    // 3001 rows read 500 at a time: at least 7 statements, never one for everything.
    expect(csvStatements.filter((sql) => sql.includes('left join lateral')).length).toBeGreaterThanOrEqual(7);
  }, 120_000);

  it('stops reading when the client goes away', async () => {
    const big = await app.organization('CSV abandoned');
    const seeded = await campaignWithExecution(app, big, 1);
    const rows = 10_000;
    await app.sql(
      `insert into execution_contacts (id, created_at, updated_at, organization_id, execution_id, contact_id, phone, status, attempts, reached_node_ids)
       select gen_random_uuid(), now(), now(), ?, ?, null, '+1415' || lpad(n::text, 7, '0'), 'failed', 1, '[]'::jsonb from generate_series(1, ?) n`,
      [big.organizationId, seeded.executionId, rows],
    );
    // About 4 KB a row: 40 MB in all, far more than the sockets' buffers hold (a few MB).
    await app.sql(
      `insert into calls (id, created_at, updated_at, organization_id, execution_id, execution_contact_id, direction, to_number, status, attempt, carrier, queued_at, reached_node_ids, error_text, credits_charged)
       select gen_random_uuid(), now(), now(), ec.organization_id, ec.execution_id, ec.id, 'outbound', ec.phone, 'failed', 1, 'simulator', now(), '[]'::jsonb, repeat('x', 4000), 0
       from execution_contacts ec where ec.execution_id = ? and ec.contact_id is null`,
      [seeded.executionId],
    );
    const pages = Math.ceil((rows + 1) / 500);
    const statements = await recordStatements(app, async () => {
      const controller = new AbortController();
      const res = await fetch(`${app.baseUrl}/api/executions/${seeded.executionId}/calls.csv`, { headers: { 'x-api-key': big.apiKey }, signal: controller.signal });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value).startsWith('contactId,phone,')).toBe(true);
      controller.abort();
      await reader.cancel().catch(() => undefined);
      // Give the server time to notice; a server that kept reading would run every page meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 3000));
    });
    const read = statements.filter((sql) => sql.includes('left join lateral')).length;
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(pages / 2);
    // The gateway still answers.
    expect((await big.rest.get('/api/calls?limit=1')).status).toBe(200);
  }, 120_000);
});
