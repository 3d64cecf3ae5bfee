import { MAX_OPERATION_LABELS, MAX_OPERATION_LABEL_LENGTH } from '../../src/platform/metrics.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

// Issue 9, finding 1: GraphQL operation names are client-chosen; as metric labels they must come from a bounded set.

let app: TestApp;
let acme: TestOrganization;

const METRICS_TOKEN = 'metrics-token-for-tests';
const auth = { authorization: `Bearer ${METRICS_TOKEN}` };

beforeAll(async () => {
  app = await startTestApp({ metricsToken: METRICS_TOKEN });
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

async function scrape(): Promise<string> {
  const res = await fetch(`${app.baseUrl}/metrics`, { headers: auth });
  expect(res.status).toBe(200);
  return res.text();
}

async function operation(name: string, headers: Record<string, string>) {
  const res = await fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: `query ${name} { me { id } }` }),
  });
  await res.text();
  return res.status;
}

const series = (text: string, route: string) => text.split('\n').filter((line) => line.includes(`route="${route}"`)).length;

it('an anonymous operation is labelled anonymous, whatever its name', async () => {
  const name = `Huge${'x'.repeat(200_000)}`;
  const before = (await scrape()).length;
  expect(await operation(name, {})).toBe(401);
  expect(await operation(name, { 'x-api-key': 'tag_wrong' })).toBe(401);
  const text = await scrape();
  expect(text).not.toContain('Huge');
  expect(series(text, 'anonymous')).toBeGreaterThan(0);
  expect(text.length - before).toBeLessThan(10_000);
});

it('authenticated names are kept up to a number and a length; the rest count as other, so /metrics stays bounded', async () => {
  const headers = { 'x-api-key': acme.apiKey };
  // Fill the set of kept names, then keep sending new ones: short, long, many.
  for (let i = 0; i < MAX_OPERATION_LABELS + 20; i++) expect(await operation(`Op${i}`, headers)).toBe(200);
  const full = await scrape();
  expect(series(full, 'Op0')).toBeGreaterThan(0);
  expect(series(full, `Op${MAX_OPERATION_LABELS + 10}`)).toBe(0);
  expect(series(full, 'other')).toBeGreaterThan(0);
  for (let i = 0; i < 200; i++) expect(await operation(`Long${i}${'y'.repeat(5000)}`, headers)).toBe(200);
  for (let i = 0; i < 50; i++) expect(await operation(`Later${i}`, headers)).toBe(200);
  const after = await scrape();
  expect(after).not.toContain('Long');
  expect(after).not.toContain('Later');
  // Same series as before, only counts moved (a scrape's own process metrics vary by a few bytes).
  expect(Math.abs(after.length - full.length)).toBeLessThan(2_000);
  expect(after.length).toBeLessThan(1_000_000);
});

it('a name just within the length limit is kept; one character more is other', async () => {
  const fresh = await startTestApp(app.config);
  try {
    const org = await fresh.organization('Fresh');
    const kept = `K${'k'.repeat(MAX_OPERATION_LABEL_LENGTH - 1)}`;
    const cut = `C${'c'.repeat(MAX_OPERATION_LABEL_LENGTH)}`;
    for (const name of [kept, cut]) {
      await fetch(`${fresh.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': org.apiKey },
        body: JSON.stringify({ query: `query ${name} { me { id } }` }),
      });
    }
    const text = await (await fetch(`${fresh.baseUrl}/metrics`, { headers: auth })).text();
    expect(text).toContain(`route="${kept}"`);
    expect(text).not.toContain(cut);
  } finally {
    await fresh.close();
  }
});
