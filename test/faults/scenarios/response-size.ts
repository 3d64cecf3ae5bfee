// A response-size bomb: many concurrent GraphQL operations whose answers would pass
// RESPONSE_MAX_BYTES (refused 400, never half-sent) beside large-but-allowed pages on both doors;
// /healthz and another organization stay responsive and the gateway's memory stays bounded.
import { sample } from '../report.js';
import { startGateway } from '../server.js';
import type { ScenarioContext } from './context.js';
import { call, checkResponsiveness, createOrganization, prose, storm, watchResponsiveness } from './stall.js';

const MAX_BYTES = 4 * 1024 * 1024;
const DOCUMENT_CHARS = 600_000;
const WORKERS = 6;
const DURATION_MS = 5000;
// The issue asks for p99 under 100 ms. The answer budget refuses the bomb once the texts it has charged
// pass the limit, before the rest are read and before anything is serialized, and weighs its organization
// at once, so the organization gate gives it one place from its first refusal on (docs/security.md ›
// The answer budget).
const HEALTH_P50_MS = 100;
const HEALTH_P99_MS = 100;
// A 2-core machine shared with PostgreSQL, the load's clients and the probe does not always hold
// 100 ms whatever the gateway does (docs/security.md › Query cost, answer size and knowledge search).
// So the same load without the bomb is run first, in this run on this machine, and the bomb may not
// make /healthz worse than three times its p99 there (about twice, measured). The code before the
// answer budget gave 150 to 290 ms where this load alone gives 36. A refused bomb that costs little
// passes either way; one that is built or serialized does not.
const BASELINE_MS = DURATION_MS; // as long as the bomb, so both p99s come from as many probes
const BASELINE_FACTOR = 3;
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
    const added = await call(`${gateway.url}/api/knowledge-bases/${baseId}/documents`, {
      body: { title: `Manual ${i}`, content: prose(DOCUMENT_CHARS, i + 1) },
    });
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

  const allowedKinds = kinds.filter((kind) => kind.expect === 200);
  const baselineWatch = watchResponsiveness(gateway, other.apiKey);
  await baselineWatch.ready;
  await storm(WORKERS, BASELINE_MS, (n) => allowedKinds[n % allowedKinds.length]!.run());
  const baseline = await baselineWatch.stop();
  report.note(
    `without the bomb (${BASELINE_MS / 1000} s of the allowed answers alone): /healthz ${baseline.health.count} probes p50 ${baseline.health.p50} ms, p99 ${baseline.health.p99} ms`,
  );

  const watch = watchResponsiveness(gateway, other.apiKey);
  await watch.ready;
  const results = await storm(WORKERS, DURATION_MS, async (n) => {
    const kind = kinds[n % kinds.length]!;
    return { kind, answer: await kind.run() };
  });
  const seen = await watch.stop();
  const rssStart = baseline.rss.start; // before any large answer: the growth counts the load without the bomb too

  report.note(
    `${results.length} requests; /healthz ${seen.health.count} probes p50 ${seen.health.p50} ms, p99 ${seen.health.p99} ms, max ${seen.health.max} ms; RSS ${rssStart.toFixed(0)} → peak ${seen.rss.peak.toFixed(0)} MiB`,
  );
  const wrong = results.filter(({ kind, answer }) => answer.status !== kind.expect || (kind.expect === 400 && answer.code !== 'BAD_USER_INPUT'));
  report.check(
    'answers over the limit are 400 BAD_USER_INPUT, the allowed ones 200 (never 500, never cut short)',
    results.length > 0 && wrong.length === 0,
    sample(wrong.map(({ kind, answer }) => [kind.name, answer.status, answer.code, answer.bytes])),
  );
  const bombAnswers = results.filter(({ kind }) => kind.expect === 400).map(({ answer }) => answer.bytes);
  report.check(
    'a refused answer is a short error, not the body',
    bombAnswers.every((bytes) => bytes < 2000),
    `largest ${Math.max(...bombAnswers)} bytes`,
  );
  report.check(`/healthz p50 under ${HEALTH_P50_MS} ms`, seen.health.p50 < HEALTH_P50_MS, `p50 ${seen.health.p50} ms over ${seen.health.count} probes`);
  checkResponsiveness(report, seen, baseline, {
    fault: 'bomb',
    healthP99Ms: HEALTH_P99_MS,
    baselineFactor: BASELINE_FACTOR,
    meMaxMs: ME_MAX_MS,
    rssGrowthMiB: RSS_GROWTH_MIB,
  });
}
