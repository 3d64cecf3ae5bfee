import { REST_ROUTES } from '../../src/doors.js';
import { paramsOf, resourceOfParam, seed, type Seeded } from '../fuzz/fixtures.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

// UUIDs are case-blind: every GET with ids answers the same with them in capitals. The paged lists of
// a parent (a program's executions, …) once answered 500 when the parent's id came in capitals.
let app: TestApp;
let org: TestOrganization;
let ids: Seeded;

beforeAll(async () => {
  app = await startTestApp();
  org = await app.organization('Shouty');
  ids = await seed(org, app);
});
afterAll(() => app?.close());

const reads = REST_ROUTES.filter((route) => route.method === 'get' && paramsOf(route.path).length > 0 && !route.streams);

it.each(reads.map((route) => [route.path, route] as const))('GET %s answers the same with its ids in capitals', async (_path, route) => {
  const path = (upper: boolean) =>
    paramsOf(route.path).reduce((text, param) => {
      const id = ids[resourceOfParam(route.path, param)];
      return text.replace(`{${param}}`, upper ? id.toUpperCase() : id);
    }, `/api${route.path}`);
  const lower = await org.rest.get(path(false));
  const upper = await org.rest.get(path(true));
  expect([upper.status, upper.body]).toEqual([lower.status, lower.body]);
  expect(upper.status).toBeLessThan(500);
});
