import fc from 'fast-check';
import { REST_ROUTES } from '../../src/doors.js';
import type { RouteDefinition } from '../../src/rest/routes.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { deepJsonText, hostileBody, hostileQuery, hostileString, longId, runs } from './arbitraries.js';
import { fieldsOfClass, paramsOf, rowCounts, seed, type Seeded } from './fixtures.js';

const MALFORMED_JSON = ['{', '{"a":', 'nul', '[1,]', '{"a":1}{"b":2}', '\u0000', '"unterminated', '{"__proto__":{"polluted":1}}'];

/**
 * Hostile requests at each route of `select(REST_ROUTES)`: the answer is never a 5xx, every error is
 * problem+json, and a 4xx wrote no row. One app per file; the routes are split over files so jest runs them in parallel.
 */
export function fuzzRoutes(select: (routes: RouteDefinition[]) => RouteDefinition[], numRuns = 12): void {
  let app: TestApp;
  let fuzzer: TestOrganization;
  let own: Seeded;
  let other: Seeded;

  beforeAll(async () => {
    app = await startTestApp();
    fuzzer = await app.organization('Fuzzer');
    const victim = await app.organization('Victim');
    own = await seed(fuzzer, app);
    other = await seed(victim, app);
  });
  afterAll(() => app?.close());

  const routes = select(REST_ROUTES);

  it('covers routes', () => expect(routes.length).toBeGreaterThan(0));

  it.each(routes.map((route) => [`${route.method.toUpperCase()} ${route.path}`, route] as const))(
    '%s: no 5xx, problem+json errors, no write on a 4xx',
    async (_label, route) => {
      const ids = () => [...Object.values(other), ...(route.method === 'delete' ? [] : Object.values(own))];
      const id = fc.oneof(
        fc.uuid(),
        fc.uuid({ version: [4, 7] }),
        fc.constantFrom(...ids()),
        fc.constantFrom(...ids()).map((real) => real.toUpperCase()),
        hostileString.filter((text) => text.length > 0 && text.length < 500).map(encodeURIComponent),
        fc.constantFrom('1', '0', '-1', 'null', 'undefined', '%2E%2E', '00000000-0000-0000-0000-000000000000'),
        longId,
      );
      const params = paramsOf(route.path);
      const path = fc
        .tuple(...params.map(() => id))
        .map((values) => params.reduce((text, name, i) => text.replace(`{${name}}`, values[i]!), `/api${route.path}`));
      const sendsBody = route.method !== 'get' && route.method !== 'delete';
      const body = sendsBody
        ? fc.oneof(
            { weight: 5, arbitrary: hostileBody(fieldsOfClass(route.body)).map((value) => JSON.stringify(value)) },
            { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_JSON) },
            { weight: 1, arbitrary: deepJsonText(fieldsOfClass(route.body)) },
            { weight: 1, arbitrary: fc.constant(undefined) },
          )
        : fc.constant(undefined);
      const query = fc.oneof(fc.constant(''), hostileQuery(fieldsOfClass(route.query)));
      // Idempotent creates store the concrete path and the key: long ids and keys reach the database there.
      const idempotencyKey = route.idempotent
        ? fc.option(
            fc.oneof(
              fc.uuid(),
              hostileString.filter((text) => /^[\x21-\x7e][\x20-\x7e]*$/.test(text) && text.length < 300),
            ),
            { nil: undefined },
          )
        : fc.constant(undefined);

      let before = await rowCounts(app);
      await fc.assert(
        fc.asyncProperty(path, query, body, idempotencyKey, async (target, search, raw, key) => {
          const client = key === undefined ? fuzzer.rest : fuzzer.rest.with({ 'Idempotency-Key': key });
          // A live stream (SSE) never ends by itself: its status and headers are the answer.
          const res =
            route.streams?.mediaType === 'text/event-stream'
              ? await openLiveStream(`${app.baseUrl}${target}${search}`, {
                  'x-api-key': fuzzer.apiKey,
                  ...(key === undefined ? {} : { 'Idempotency-Key': key }),
                })
              : await client.request(route.method.toUpperCase(), `${target}${search}`, undefined, raw);
          const seen = `${res.status} ${JSON.stringify(res.body)?.slice(0, 500)}`;
          if (res.status >= 500) throw new Error(`5xx: ${seen}`);
          if (res.status >= 400) {
            if (!res.headers.get('content-type')?.startsWith('application/problem+json')) throw new Error(`error without problem+json: ${seen}`);
            if (res.body?.status !== res.status || typeof res.body?.code !== 'string') throw new Error(`problem body does not match: ${seen}`);
            const after = await rowCounts(app);
            expect({ status: res.status, rows: after }).toEqual({ status: res.status, rows: before });
          } else {
            before = await rowCounts(app);
          }
        }),
        runs(numRuns),
      );
    },
  );
}

/** GET of a live stream: a 200 is closed once its headers arrive; an error is read whole. */
async function openLiveStream(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  if (response.status === 200) {
    controller.abort();
    return { status: 200, headers: response.headers, body: undefined };
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, body };
}
