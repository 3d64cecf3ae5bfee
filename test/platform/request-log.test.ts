import { startTestApp, type TestApp } from '../helpers/app.js';

// The request log at info, as an operator reads it: one short line per request, no header dump.
let app: TestApp;
const lines: string[] = [];

beforeAll(async () => {
  app = await startTestApp({ logLevel: 'info' }, { write: (line: string) => void lines.push(line) });
});
afterAll(() => app.close());

it('at info, a request is one line with method, url, status, time and request id, and no headers', async () => {
  const org = await app.organization('Logged');
  lines.length = 0;
  const res = await org.rest.with({ 'x-request-id': 'log-shape-1', 'user-agent': 'shape-test-agent' }).get('/api/users/me?');
  expect(res.status).toBe(200);
  await app.rest({ 'x-request-id': 'log-shape-2' }).get('/api/users/me');
  const entries = lines.map((line) => JSON.parse(line) as Record<string, any>).filter((entry) => entry.requestId?.startsWith('log-shape-'));
  expect(entries).toHaveLength(2);
  const [ok, refused] = entries;
  expect(ok).toMatchObject({ level: 30, requestId: 'log-shape-1', req: { method: 'GET', url: '/api/users/me?' }, res: { statusCode: 200 } });
  expect(ok!.msg).toMatch(/^GET \/api\/users\/me\? 200 \d+ms$/);
  expect(typeof ok!.responseTime).toBe('number');
  expect(Object.keys(ok!.req).sort()).toEqual(['method', 'url']);
  expect(Object.keys(ok!.res)).toEqual(['statusCode']);
  expect(lines.join('')).not.toContain('shape-test-agent');
  expect(lines.join('')).not.toContain('"headers"');
  expect(refused).toMatchObject({ res: { statusCode: 401 } });
});
