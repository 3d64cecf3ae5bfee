import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { parse } from 'graphql';
import pg from 'pg';
import { RequestContext } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent } from '../../src/modules/agents/agent.entity.js';
import { readJsonPage } from '../../src/db/read-model.js';
import { openDatabase, type Database } from '../../src/db/orm.js';
import { MAX_PREPARED_PER_CONNECTION } from '../../src/db/prepared-reads.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { TEST_DATABASE_URL } from '../helpers/database.js';
import { createAgent } from '../helpers/tricky-agents.js';
import { recordStatements } from '../helpers/users.js';
import { holdLock, lockEachTest } from '../helpers/lock-waits.js';
import { TestDeadlines } from '../helpers/deadlines.js';

// The read model's kept statements run on PostgreSQL as prepared statements on the pool, with their
// values as parameters (src/db/prepared-reads.ts); on PGlite, and inside a transaction, through the
// ORM, which writes the values into the SQL. Both must read the same rows for the same values, a
// value must stay a value whatever it holds, and an aborted request's read must not keep running.

const SEARCHES = [`O'Brien`, `what?`, `$1`, `back\\slash`, `100%`, `under_score`, `'); drop table agents; --`];

type AgentsPage = { agents: { data: { name: string }[]; meta: { total: number } } };
const SEARCH_QUERY = 'query Search($search: String) { agents(search: $search, limit: 100) { data { name } meta { total } } }';
const AGENTS_BY_SEARCH = parse(SEARCH_QUERY) as TypedDocumentNode<AgentsPage, { search: string }>;

describe('kept reads: values stay values', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;
  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    other = await app.organization('Other');
    for (const org of [acme, other]) {
      for (const search of [...SEARCHES, 'plain']) {
        await createAgent(org, { name: `${search} agent` });
      }
    }
  });
  afterAll(async () => {
    await app.close();
  });

  it.each(SEARCHES)('searching for %j finds the one agent named with it, on both doors, twice', async (search) => {
    // Each read twice: the first builds the statement, the second runs the kept one.
    for (let round = 0; round < 2; round++) {
      const rest = await acme.rest.get(`/api/agents?limit=100&search=${encodeURIComponent(search)}`);
      expect(rest.status).toBe(200);
      expect(rest.body.data.map((agent: { name: string }) => agent.name)).toEqual([`${search} agent`]);
      const graphql = await acme.graphql.ok(AGENTS_BY_SEARCH, { search });
      expect(graphql.agents.data.map((agent) => agent.name)).toEqual([`${search} agent`]);
      expect(graphql.agents.meta.total).toBe(1);
    }
    // The agents table is still there, and the other organization's agents never showed.
    expect((await acme.rest.get('/api/agents?limit=100')).body.meta.total).toBe(SEARCHES.length + 1);
  });

  it('a statement PostgreSQL cannot prepare (a value only its literal typed) is read the ORM way, tried prepared once', async () => {
    const read = () =>
      RequestContext.create(app.db.database.orm.em, async () => {
        const em = app.db.database.orm.em.getContext() as unknown as EntityManager;
        // json_build_object's arguments are "any": a parameter there has no type, a quoted literal is text.
        const row = { key: 'untyped-parameter', sql: () => `json_build_object('tag', ?)::text`, params: ['kept'] };
        const where = { organization: acme.organizationId, name: 'plain agent' };
        return readJsonPage(em, Agent, where as never, { limit: 5, offset: 0 }, row);
      });
    const answers: unknown[] = [];
    const counts: number[] = [];
    for (let round = 0; round < 3; round++) {
      counts.push((await recordStatements(app, async () => void answers.push(await read()))).length);
    }
    expect(answers).toEqual(Array(3).fill({ json: ['{"tag" : "kept"}'], total: 1, meta: expect.objectContaining({ page: 1, total: 1 }) }));
    // Kept from the first read on: on PostgreSQL tried prepared, refused, and read the ORM way; from then on the ORM way only.
    expect(counts).toEqual(TEST_DATABASE_URL ? [2, 1, 1] : [1, 1, 1]);
  });

  (TEST_DATABASE_URL ? it : it.skip)('a pool connection keeps at most MAX_PREPARED_PER_CONNECTION statements prepared', async () => {
    // More distinct shapes than one connection may keep, read one after the other (the pool hands back the connection last released).
    const shapes = MAX_PREPARED_PER_CONNECTION + 30;
    for (let index = 0; index < shapes; index++) {
      const answer = await RequestContext.create(app.db.database.orm.em, async () => {
        const em = app.db.database.orm.em.getContext() as unknown as EntityManager;
        const row = { key: `shape-${index}`, sql: () => `json_build_object('shape', ${index})::text` };
        return readJsonPage(em, Agent, { organization: acme.organizationId, name: 'plain agent' } as never, { limit: 5, offset: 0 }, row);
      });
      expect(answer.json).toEqual([`{"shape" : ${index}}`]);
    }
    // Every connection the pool holds, asked what it has prepared.
    const pool = await (app.db.database.orm.em.getDriver().getConnection() as unknown as { getNativeClient(): Promise<pg.Pool> }).getNativeClient();
    const clients = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()));
    try {
      const counts = await Promise.all(
        clients.map(async (client) =>
          Number((await client.query<{ n: string }>(`select count(*) as n from pg_prepared_statements where name like 'read\\_%'`)).rows[0]!.n),
        ),
      );
      expect(Math.max(...counts)).toBeLessThanOrEqual(MAX_PREPARED_PER_CONNECTION);
      // The reads above were prepared: the connections hold some of them.
      expect(counts.reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
    } finally {
      for (const client of clients) client.release();
    }
  });

  (TEST_DATABASE_URL ? it : it.skip)(
    'prepared on a pool opened without migrations; with DB_PREPARED_STATEMENTS=false the same answers and nothing prepared',
    async () => {
      // Both opened as a server with MIGRATE_ON_START=false opens it: nothing has used the pool yet.
      const unprepared = await openDatabase({ databaseUrl: app.db.url!, dataDir: 'memory://', migrate: false, preparedReads: false });
      const unmigrated = await openDatabase({ databaseUrl: app.db.url!, dataDir: 'memory://', migrate: false });
      try {
        const row = { key: 'names', sql: (alias: string) => `json_build_object('name', ${alias}."name")::text` };
        const where = { organization: acme.organizationId, name: `O'Brien agent` };
        const read = (database: Database) =>
          RequestContext.create(database.orm.em, () =>
            readJsonPage(
              database.orm.em.getContext() as unknown as EntityManager,
              Agent,
              where as never,
              { limit: 5, offset: 0, orderBy: [{ name: 'asc' }] as never },
              row,
            ),
          );
        const expected = { json: ['{"name" : "O\'Brien agent"}'], total: 1, meta: expect.objectContaining({ page: 1, total: 1 }) };
        // Twice each: built, then kept; the kept read runs prepared on one, with its values written in on the other.
        for (const database of [app.db.database, unprepared, unmigrated, app.db.database, unprepared, unmigrated])
          expect(await read(database)).toEqual(expected);
        // This read's statement, prepared on each connection of a database's pool.
        const preparedOn = async (database: Database) => {
          const pool = await (database.orm.em.getDriver().getConnection() as unknown as { getNativeClient(): Promise<pg.Pool> }).getNativeClient();
          const clients = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()));
          try {
            const sql = `select count(*) as n from pg_prepared_statements where statement like '%json_build_object(''name''%'`;
            return await Promise.all(clients.map(async (client) => Number((await client.query<{ n: string }>(sql)).rows[0]!.n)));
          } finally {
            for (const client of clients) client.release();
          }
        };
        for (const database of [app.db.database, unmigrated]) expect((await preparedOn(database)).reduce((sum, n) => sum + n, 0)).toBeGreaterThan(0);
        const counts = await preparedOn(unprepared);
        expect(counts.length).toBeGreaterThan(0);
        expect(counts).toEqual(counts.map(() => 0));
      } finally {
        await unprepared.close();
        await unmigrated.close();
      }
    },
  );
});

// PGlite has one connection (one session) and no cancel: nothing can lock a table against it.
(TEST_DATABASE_URL ? describe : describe.skip)('PostgreSQL: a kept read running at the deadline is cancelled', () => {
  let app: TestApp;
  let acme: TestOrganization;
  const deadlines = new TestDeadlines();
  beforeAll(async () => {
    app = await startTestApp({ requestTimeoutMs: 400 }, undefined, { requestDeadline: deadlines.deadline });
    acme = await app.organization('Acme');
    await createAgent(acme, { name: 'Front desk' });
    // The first read of each shape builds its statement; these keep them, so the reads below are the kept ones.
    expect((await acme.rest.get('/api/agents')).status).toBe(200);
    await acme.graphql.ok(AGENTS_BY_SEARCH, { search: 'Front' });
  });
  // Another session holds the agents table against every reader: the page's read waits in PostgreSQL.
  const { expectCancelled, letGo } = lockEachTest(
    () => app,
    () => holdLock(app, 'lock table agents in access exclusive mode'),
    deadlines,
  );
  afterAll(async () => {
    await app.close();
  });

  it('REST: 503, no statement left running, and the connection serves the next request', async () => {
    await expectCancelled(async () => {
      const res = await acme.rest.get('/api/agents');
      expect(res.body.code).toBe('UNAVAILABLE');
      return res.status;
    });
    await letGo();
    // Every connection of the pool, the cancelled one among them, answers again.
    const pages = await Promise.all(Array.from({ length: 12 }, () => acme.rest.get('/api/agents')));
    expect(pages.map((page) => page.status)).toEqual(Array(12).fill(200));
  });

  it('GraphQL: 503, and no statement left running', async () => {
    await expectCancelled(async () => {
      const res = await fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
        body: JSON.stringify({ query: SEARCH_QUERY, variables: { search: 'Front' } }),
      });
      const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('UNAVAILABLE');
      return res.status;
    });
  });
});
