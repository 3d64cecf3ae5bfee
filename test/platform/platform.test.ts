import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PgliteThreadClient } from '../../src/db/pglite-thread-client.js';
import { printGatewaySchema } from '../../src/doors.js';
import { REST_ROUTES } from '../../src/doors.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { migratedDump, TEST_DATABASE_URL } from '../helpers/database.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp({ bodyLimitBytes: 2048 });
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

describe('the GraphQL schema', () => {
  it('schema/schema.graphql is exactly what the code builds (run npm run schema:print)', async () => {
    const checkedIn = readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(checkedIn).toBe(await printGatewaySchema());
  });

  it('GET /graphql in a browser shows the Apollo Sandbox landing page pointed at this endpoint', async () => {
    const res = await fetch(`${app.baseUrl}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('sandbox');
    expect(html.toLowerCase()).toContain('<!doctype html>');
  });

  it('answers Sandbox preflight requests for the credential headers', async () => {
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://sandbox.embed.apollographql.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-api-key',
      },
    });
    expect(res.status).toBeLessThan(300);
    expect(res.headers.get('access-control-allow-headers')).toContain('x-api-key');
  });
});

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and lists every REST route the app serves, with its schemas resolvable', async () => {
    const { status, body: doc } = await app.rest().get('/api/openapi.json');
    expect(status).toBe(200);
    expect(doc.openapi).toBe('3.1.0');
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const served = REST_ROUTES.map((route) => `${route.method.toUpperCase()} /api${route.path}`);
    expect(documented.sort()).toEqual(served.sort());
    for (const pointer of JSON.stringify(doc).match(/#\/components\/schemas\/\w+/g) ?? []) {
      expect(doc.components.schemas).toHaveProperty(pointer.split('/').pop()!);
    }
    expect(doc.components.schemas.CreateApiKeyInput.properties.name).toMatchObject({ maxLength: 255 });
    expect(doc.components.schemas.ApiKey.properties).not.toHaveProperty('secret');
    expect(doc.components.schemas.CreatedApiKey.required).toContain('secret');
    const idempotencyHeader = (path: string) =>
      (doc.paths[path].post.parameters ?? []).some(
        (parameter: { name: string; in: string }) => parameter.in === 'header' && parameter.name === 'Idempotency-Key',
      );
    expect(idempotencyHeader('/api/agents')).toBe(true);
    expect(idempotencyHeader('/api/auth/token')).toBe(false);
  });

  it('every documented route is really served (none answers the unknown-route 404)', async () => {
    for (const route of REST_ROUTES) {
      const path = `/api${route.path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000')}`;
      const res = await acme.rest.request(route.method.toUpperCase(), path, route.body ? {} : undefined);
      expect(res.body?.detail ?? '').not.toMatch(/^No route/);
    }
  });
});

describe('errors', () => {
  it('an unknown route answers 404 problem+json', async () => {
    const res = await acme.rest.get('/api/nothing-here');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body).toMatchObject({ status: 404, code: 'NOT_FOUND', title: 'Not Found' });
  });

  it('a body over the configured limit answers 413 problem+json', async () => {
    const res = await acme.rest.post('/api/auth/api-keys', { name: 'x'.repeat(5000), prefix: 'big' });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('an unknown query parameter is refused rather than ignored', async () => {
    const res = await acme.rest.get('/api/auth/api-keys?size=5');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'size', message: expect.any(String) }]);
  });

  it('every answer carries a request id, and the error body repeats it', async () => {
    const res = await app.rest({ 'x-request-id': 'trace-123' }).get('/api/users/me');
    expect(res.headers.get('x-request-id')).toBe('trace-123');
    expect(res.body.requestId).toBe('trace-123');
  });
});

// Each app of a test file starts on a database as the migrations leave it. On PGlite a closed app's
// database is emptied and handed to the file's next app (test/helpers/database.ts); these check that
// nothing of the first app is left for the second.
describe('test databases', () => {
  const onPglite = !TEST_DATABASE_URL;
  const startedAt = async (other: TestApp) => (await other.sql<{ at: string }>('select pg_postmaster_start_time()::text as at'))[0]!.at;
  const rowCounts = async (other: TestApp) => {
    const tables = await other.sql<{ name: string }>(
      `select format('%I', tablename) as name from pg_tables where schemaname = 'public' and tablename <> 'mikro_orm_migrations' order by 1`,
    );
    const counts: Record<string, number> = {};
    for (const { name } of tables) counts[name] = Number((await other.sql<{ n: string }>(`select count(*) as n from ${name}`))[0]!.n);
    return counts;
  };

  it('a second app starts with no row, setting or listener of the first (on PGlite, on the same database, emptied)', async () => {
    const first = await startTestApp();
    const org = await first.organization('Left behind');
    await org.rest.post('/api/contacts', { name: 'Ada Lovelace', phone: '+14155550100' });
    await first.sql('set statement_timeout = 1234');
    await first.sql('listen left_behind');
    const firstStart = await startedAt(first);
    const written = await rowCounts(first);
    expect(written.organizations).toBe(1);
    expect(written.contacts).toBe(1);
    const migrations = await first.sql('select name from mikro_orm_migrations order by id');
    await first.close();

    const second = await startTestApp();
    try {
      if (onPglite) expect(await startedAt(second)).toBe(firstStart); // the same PGlite, emptied
      expect(Object.values(await rowCounts(second)).every((n) => n === 0)).toBe(true);
      expect(Object.keys(await rowCounts(second))).toEqual(Object.keys(written));
      expect(await second.sql('select name from mikro_orm_migrations order by id')).toEqual(migrations);
      expect((await second.sql<{ statement_timeout: string }>('show statement_timeout'))[0]!.statement_timeout).toBe('0');
      const channels = await second.sql<{ channel: string }>('select pg_listening_channels() as channel');
      expect(channels.map((row) => row.channel)).not.toContain('left_behind');
      const fresh = await second.organization('Fresh');
      expect((await fresh.rest.get('/api/contacts')).body.data).toEqual([]);
    } finally {
      await second.close();
    }
  });

  it('a database whose schema a test changed is not handed on', async () => {
    const first = await startTestApp();
    await first.sql('create table scratch (id int)');
    const firstStart = await startedAt(first);
    await first.close();

    const second = await startTestApp();
    try {
      if (onPglite) expect(await startedAt(second)).not.toBe(firstStart); // a fresh one from the dump
      expect(await second.sql(`select tablename from pg_tables where tablename = 'scratch'`)).toEqual([]);
    } finally {
      await second.close();
    }
  });
});

// PGlite runs in a thread of its own (src/db/pglite-thread-client.ts): a long statement never holds
// the event loop, and what MikroORM reads through it is what it read from PGlite in the process.
describe('the embedded database’s thread', () => {
  const onPglite = !TEST_DATABASE_URL;
  // About a second of work for PGlite on a quiet machine.
  const LONG = 'select count(*)::int as n from generate_series(1, 3000000) g where g % 7 = 3';

  (onPglite ? it : it.skip)('answers /healthz and runs timers while a long statement runs', async () => {
    let done = false;
    const statement = app.sql(LONG).then((rows) => {
      done = true;
      return rows;
    });
    // Turns of the event loop while the statement runs: in the process, none until it has finished.
    let turns = 0;
    while (!done && turns < 20) {
      await new Promise((resolve) => setImmediate(resolve));
      turns++;
    }
    const health = await fetch(`${app.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(done).toBe(false);
    expect(turns).toBe(20);
    expect((await statement)[0]).toEqual({ n: 428572 });
  });

  (onPglite ? it : it.skip)('serves a request’s statements before background work that queued earlier', async () => {
    const { database } = app.db;
    // Background work (outside any request) holds the one session, and eight more statements wait behind it.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const holder = database.em.fork().transactional(async (em) => {
      await em.execute('select 1');
      holding();
      await gate;
    });
    await held;
    const finished: string[] = [];
    const background = [1, 2, 3, 4, 5, 6, 7, 8].map((n) =>
      database.em
        .fork()
        .getConnection()
        .execute(`select count(*) from generate_series(1, 100000) where ${n} > 0`)
        .then(() => finished.push(`background ${n}`)),
    );
    const me = acme.rest.get('/api/users/me').then((res) => {
      finished.push('request');
      return res;
    });
    while ((database.embeddedWaiting()?.requests ?? 0) === 0) await new Promise((resolve) => setImmediate(resolve));
    expect(database.embeddedWaiting()).toEqual({ requests: 1, background: 8 });
    open();
    await Promise.all([holder, ...background]);
    expect((await me).status).toBe(200);
    // Its statements went first each time one was waiting: a background statement ran only while the
    // request had none waiting (first come, first served, it would have come after all eight).
    expect(finished.indexOf('request')).toBeLessThan(6);
  });

  (onPglite ? it : it.skip)('parses rows as MikroORM’s own PGlite does (dates and intervals as text, arrays, JSON, bytes)', async () => {
    const { createPostgreSqlTypeParsers } = await import('@mikro-orm/sql');
    const array = (await import('postgres-array')).default as { parse(text: string): string[] };
    const dump = await migratedDump();
    const inProcess = await PGlite.create({ loadDataDir: new Blob([dump]), parsers: createPostgreSqlTypeParsers((text: string) => array.parse(text)) });
    const thread = await PgliteThreadClient.create({ loadDataDir: dump });
    try {
      const sql = `select timestamptz '2026-12-01 10:11:12.345678+02' as at, date '2026-02-03' as day, interval '1 day 2 hours' as span,
        array[timestamptz '2026-12-01 10:00+00', null] as ats, '{"a": [1, "x", null]}'::jsonb as doc, '\\x00ff'::bytea as bytes,
        9007199254740993::int8 as big, 1.50::numeric as amount, array[1, 2]::int[] as ints, true as yes, null::text as none`;
      const expected = await inProcess.query(sql, [], { rowMode: 'object' });
      const got = await thread.query(sql, [], { rowMode: 'object' });
      expect(got.rows).toEqual(expected.rows);
      expect(got.rows[0]).toMatchObject({ at: '2026-12-01 08:11:12.345678+00', span: '1 day 02:00:00', doc: { a: [1, 'x', null] } });
      const withParams = 'select $1::timestamptz as at, $2::jsonb as doc, $3::text[] as tags, $4::bytea as bytes';
      const params = [new Date('2026-12-01T08:00:00.000Z'), JSON.stringify({ b: 2 }), ['x', 'y'], new Uint8Array([1, 2])];
      expect((await thread.query(withParams, params)).rows).toEqual((await inProcess.query(withParams, params)).rows);
    } finally {
      await thread.close();
      await inProcess.close();
    }
  });

  (onPglite ? it : it.skip)('holds a transaction open until its callback settles, and keeps a failing statement’s SQLSTATE', async () => {
    const thread = await PgliteThreadClient.create({ loadDataDir: await migratedDump() });
    try {
      await thread.exec('create table t (id int primary key)');
      await thread.transaction(async (tx) => {
        await tx.query('insert into t values (1)');
        expect((await tx.query('select count(*)::int as n from t')).rows).toEqual([{ n: 1 }]);
      });
      await expect(
        thread.transaction(async (tx) => {
          await tx.query('insert into t values (2)');
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      const clash = await thread.query('insert into t values (1)').catch((error: unknown) => error);
      expect(clash).toMatchObject({ code: '23505', constraint: 't_pkey', table: 't' });
      expect((await thread.query('select id from t order by id')).rows).toEqual([{ id: 1 }]);
      const heard: string[] = [];
      const unlisten = await thread.listen('news', (payload) => heard.push(payload));
      const told = new Promise<void>((resolve) => thread.listen('news', () => resolve()));
      await thread.transaction(async (tx) => {
        await tx.query(`select pg_notify('news', 'committed')`);
        expect(heard).toEqual([]);
      });
      await told;
      expect(heard).toEqual(['committed']);
      await unlisten();
    } finally {
      await thread.close();
    }
    // Like a lost PostgreSQL connection (57P01), which the doors answer 503 UNAVAILABLE.
    await expect(thread.query('select 1')).rejects.toMatchObject({ code: '57P01' });
  });
});
