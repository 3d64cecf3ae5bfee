// A response-size bomb: many concurrent GraphQL operations whose answers would pass
// RESPONSE_MAX_BYTES (refused 400, never half-sent) beside large-but-allowed pages on both doors;
// /healthz and another organization stay responsive and the gateway's memory stays bounded.
import { sample } from '../report.js';
import { startGateway } from '../server.js';
import type { ScenarioContext } from './context.js';
import { call, createOrganization, prose, storm, watchResponsiveness } from './stall.js';

const MAX_BYTES = 4 * 1024 * 1024;
const DOCUMENT_CHARS = 600_000;
const WORKERS = 6;
const DURATION_MS = 8000;
// The issue asks for p99 under 100 ms. The answer budget refuses the bomb once the texts it has charged
// pass the limit, before the rest are read and before anything is serialized, and weighs its organization
// at once, so the organization gate gives it one place from its first refusal on (README, Security ›
// The answer budget).
const HEALTH_P50_MS = 100;
const HEALTH_P99_MS = 100;
const ME_MAX_MS = 1000;
const RSS_GROWTH_MIB = 400;

export async function responseSizeScenario(ctx: ScenarioContext): Promise<void> {
  const { report } = ctx;
  report.section(`Response-size bomb (RESPONSE_MAX_BYTES=${MAX_BYTES}, ${WORKERS} concurrent clients for ${DURATION_MS / 1000} s)`);
  const databaseUrl = await ctx.createDatabase('faults_response_size');
  const gateway = await startGateway('response-size', ctx.logDir, { DATABASE_URL: databaseUrl, RESPONSE_MAX_BYTES: String(MAX_BYTES) });
  ctx.watch(gateway);
  const other = createOrganization(databaseUrl, 'Other');

  const base = await call(`${gateway.url}/api/knowledge-bases`, { body: { name: 'Big' } });
  const baseId = (JSON.parse(base.text) as { id: string }).id;
  const documentIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    const added = await call(`${gateway.url}/api/knowledge-bases/${baseId}/documents`, { body: { title: `Manual ${i}`, content: prose(DOCUMENT_CHARS, i + 1) } });
    documentIds.push((JSON.parse(added.text) as { id: string }).id);
  }
  const documentField = (alias: string, id: string) => `${alias}: document(knowledgeBaseId: "${baseId}", documentId: "${id}") { content }`;
  // The bomb: 9 × 600 kB ≈ 5.4 MB, over the limit. Beside it, large answers that are allowed: one
  // document through each door (1.2 MB on GraphQL, 600 kB on REST).
  const bomb = `{ ${Array.from({ length: 9 }, (_, i) => documentField(`d${i}`, documentIds[i % 3]!)).join(' ')} }`;
  const allowed = `{ ${Array.from({ length: 2 }, (_, i) => documentField(`d${i}`, documentIds[i % 3]!)).join(' ')} }`;
  const kinds = [
    { name: 'GraphQL over the limit', expect: 400, run: () => call(`${gateway.url}/graphql`, { body: { query: bomb } }) },
    { name: 'GraphQL 1.2 MB', expect: 200, run: () => call(`${gateway.url}/graphql`, { body: { query: allowed } }) },
    { name: 'REST document 600 kB', expect: 200, run: () => call(`${gateway.url}/api/knowledge-bases/${baseId}/documents/${documentIds[0]}`) },
  ];

  const watch = watchResponsiveness(gateway, other.apiKey);
  await watch.ready;
  const results = await storm(WORKERS, DURATION_MS, async (n) => {
    const kind = kinds[n % kinds.length]!;
    return { kind, answer: await kind.run() };
  });
  const seen = await watch.stop();

  report.note(`${results.length} requests; /healthz ${seen.health.count} probes p50 ${seen.health.p50} ms, p99 ${seen.health.p99} ms, max ${seen.health.max} ms; RSS ${seen.rss.start.toFixed(0)} → peak ${seen.rss.peak.toFixed(0)} MiB`);
  const wrong = results.filter(({ kind, answer }) => answer.status !== kind.expect || (kind.expect === 400 && answer.code !== 'BAD_USER_INPUT'));
  report.check(
    'answers over the limit are 400 BAD_USER_INPUT, the allowed ones 200 (never 500, never cut short)',
    results.length > 0 && wrong.length === 0,
    sample(wrong.map(({ kind, answer }) => [kind.name, answer.status, answer.code, answer.bytes])),
  );
  const bombAnswers = results.filter(({ kind }) => kind.expect === 400).map(({ answer }) => answer.bytes);
  report.check('a refused answer is a short error, not the body', bombAnswers.every((bytes) => bytes < 2000), `largest ${Math.max(...bombAnswers)} bytes`);
  report.check(`/healthz p50 under ${HEALTH_P50_MS} ms`, seen.health.p50 < HEALTH_P50_MS, `p50 ${seen.health.p50} ms over ${seen.health.count} probes`);
  report.check(`/healthz p99 under ${HEALTH_P99_MS} ms`, seen.health.p99 < HEALTH_P99_MS, `p99 ${seen.health.p99} ms, max ${seen.health.max} ms over ${seen.health.count} probes`);
  report.check(
    `another organization's GET /api/users/me answers 200 within ${ME_MAX_MS} ms`,
    seen.me.count > 0 && seen.me.bad === 0 && seen.me.max < ME_MAX_MS,
    `${seen.me.count} calls, ${seen.me.bad} not 200, p99 ${seen.me.p99} ms, max ${seen.me.max} ms`,
  );
  report.check(
    `RSS grows less than ${RSS_GROWTH_MIB} MiB`,
    seen.rss.peak - seen.rss.start < RSS_GROWTH_MIB,
    `${seen.rss.start.toFixed(0)} → peak ${seen.rss.peak.toFixed(0)} → ${seen.rss.end.toFixed(0)} MiB`,
  );
}
