import { jest } from '@jest/globals';
import { RequestContext } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent } from '../../src/modules/agents/agent.entity.js';
import { readJsonPage } from '../../src/db/read-model.js';
import { runInRequestScope } from '../../src/db/request-scope.js';
import { Organization } from '../../src/modules/organizations/organization.entity.js';
import type { Database } from '../../src/db/orm.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

// A request's EntityManager is forked the first time the request asks for one (src/db/request-scope.ts):
// a page read on the pool makes none, the first entity read makes it, later ones share it, an inner
// RequestContext wins over it, and the request's abort signal reaches a read whether or not it exists.

let app: TestApp;
let database: Database;
let em: EntityManager;
let organizationId: string;
beforeAll(async () => {
  app = await startTestApp();
  database = app.db.database;
  em = database.em;
  organizationId = (await app.organization('Acme')).organizationId;
});
afterAll(() => app.close());

// An empty first page of 5, with the page meta (cursors included) both doors answer since cursor paging.
const EMPTY = {
  json: [],
  total: 0,
  meta: { page: 1, limit: 5, total: 0, totalPages: 0, hasNextPage: false, hasPreviousPage: false, nextCursor: null, prevCursor: null, lastCursor: null },
};
const page = () =>
  readJsonPage(em, Agent, { organization: organizationId } as never, { limit: 5, offset: 0 }, { key: 'scope-test', sql: (a) => `${a}.id::text` });

it('a page read makes no fork; the first entity read makes one, which the request keeps', async () => {
  // The first read of a shape builds its statement with the QueryBuilder, which asks for the context; later ones run it kept.
  await runInRequestScope(em, {}, page);
  const fork = jest.spyOn(em, 'fork');
  try {
    await runInRequestScope(em, {}, async () => {
      expect(await page()).toEqual(EMPTY);
      expect(fork).not.toHaveBeenCalled();
      const first = await em.findOneOrFail(Organization, organizationId);
      expect(fork).toHaveBeenCalledTimes(1);
      const context = em.getContext();
      expect(context).not.toBe(em);
      // The same identity map: the same instance, no second fork.
      expect(await em.findOneOrFail(Organization, organizationId)).toBe(first);
      expect(em.getContext()).toBe(context);
      expect(fork).toHaveBeenCalledTimes(1);
      // A RequestContext inside the request holds its own fork, and wins while it lasts.
      await RequestContext.create(em, async () => {
        expect(em.getContext()).not.toBe(context);
        expect(await em.findOneOrFail(Organization, organizationId)).not.toBe(first);
      });
      expect(em.getContext()).toBe(context);
    });
    // Two requests: two forks, never one shared.
    const contexts = await Promise.all(
      [1, 2].map(() =>
        runInRequestScope(em, {}, async () => {
          await em.findOneOrFail(Organization, organizationId);
          return em.getContext();
        }),
      ),
    );
    expect(contexts[0]).not.toBe(contexts[1]);
  } finally {
    fork.mockRestore();
  }
  // Outside any request, the global entity manager is its own context.
  expect(em.getContext(false)).toBe(em);
});

it("an aborted request's read does not run, with or without its fork", async () => {
  const controller = new AbortController();
  controller.abort(new Error('request timed out'));
  const options = database.abortOptions(controller.signal);
  await expect(runInRequestScope(em, options, page)).rejects.toThrow('request timed out');
  await expect(
    runInRequestScope(em, options, async () => {
      em.getContext();
      return page();
    }),
  ).rejects.toThrow('request timed out');
  // The same read in a request that was not aborted runs.
  await expect(runInRequestScope(em, database.abortOptions(new AbortController().signal), page)).resolves.toEqual(EMPTY);
});
