// A search storm: many concurrent knowledge searches (GraphQL searchKnowledgeBase) and agent
// messages that retrieve (REST test, GraphQL testAgent) over a knowledge base of a few MB;
// /healthz and another organization stay responsive and the gateway's memory stays bounded.
import { sample } from '../report.js';
import { startGateway } from '../server.js';
import type { ScenarioContext } from './context.js';
import { call, createOrganization, prose, storm, watchResponsiveness } from './stall.js';

const DOCUMENTS = 6;
const DOCUMENT_CHARS = 700_000;
const WORKERS = 8;
const DURATION_MS = 6000;
const HEALTH_P99_MS = 100;
const ME_MAX_MS = 1000;
const RSS_GROWTH_MIB = 300;
const QUESTIONS = ['refund policy for a parcel', 'reset my account password', 'opening hours of the store branch', 'insurance claim billing address'];

export async function searchStormScenario(ctx: ScenarioContext): Promise<void> {
  const { report } = ctx;
  report.section(
    `Search storm (${((DOCUMENTS * DOCUMENT_CHARS) / 1e6).toFixed(1)} MB of knowledge, ${WORKERS} concurrent clients for ${DURATION_MS / 1000} s)`,
  );
  const databaseUrl = await ctx.createDatabase('faults_search_storm');
  const gateway = await startGateway('search-storm', ctx.logDir, { DATABASE_URL: databaseUrl });
  ctx.watch(gateway);
  const other = createOrganization(databaseUrl, 'Bystander');

  const base = await call(`${gateway.url}/api/knowledge-bases`, { body: { name: 'Manuals' } });
  const baseId = (JSON.parse(base.text) as { id: string }).id;
  for (let i = 0; i < DOCUMENTS; i++) {
    const added = await call(
      `${gateway.url}/api/knowledge-bases/${baseId}/documents`,
      { body: { title: `Manual ${i}`, content: prose(DOCUMENT_CHARS, i + 7) } },
      120_000,
    );
    if (added.status !== 201) throw new Error(`seeding a document answered ${added.status} ${added.code}`);
  }
  const agent = await call(`${gateway.url}/api/agents`, {
    body: {
      name: 'Desk',
      instructions: 'Answer briefly.',
      modelConfig: { model: 'builtin/extractive' },
      knowledgeBaseConfig: { knowledgeBaseId: baseId, topK: 5, similarityThreshold: 0 },
    },
  });
  const agentId = (JSON.parse(agent.text) as { id: string }).id;
  await call(`${gateway.url}/api/agents/${agentId}/activate`, { method: 'POST' });

  const kinds = [
    {
      name: 'searchKnowledgeBase',
      run: (q: string) =>
        call(`${gateway.url}/graphql`, {
          body: {
            query: 'query S($id: ID!, $q: String!) { searchKnowledgeBase(id: $id, query: $q, topK: 10) { score content } }',
            variables: { id: baseId, q },
          },
        }),
    },
    { name: 'POST /api/agents/:id/test', run: (q: string) => call(`${gateway.url}/api/agents/${agentId}/test`, { body: { message: q } }) },
    {
      name: 'mutation testAgent',
      run: (q: string) =>
        call(`${gateway.url}/graphql`, {
          body: { query: 'mutation T($id: ID!, $m: String!) { testAgent(id: $id, message: $m) { response } }', variables: { id: agentId, m: q } },
        }),
    },
  ];

  const watch = watchResponsiveness(gateway, other.apiKey);
  const results = await storm(WORKERS, DURATION_MS, async (n) => {
    const kind = kinds[n % kinds.length]!;
    return { kind, answer: await kind.run(QUESTIONS[n % QUESTIONS.length]!) };
  });
  const seen = await watch.stop();

  const times = results.map(({ answer }) => answer.ms).sort((a, b) => a - b);
  report.note(
    `${results.length} searches and messages, median ${times[Math.floor(times.length / 2)]} ms, slowest ${times.at(-1)} ms; /healthz ${seen.health.count} probes p50 ${seen.health.p50} ms, p99 ${seen.health.p99} ms, max ${seen.health.max} ms`,
  );
  const wrong = results.filter(({ answer }) => answer.status !== 200 || answer.code !== undefined);
  report.check(
    'every search and message answers 200 with passages (never 500)',
    results.length > 0 && wrong.length === 0,
    sample(wrong.map(({ kind, answer }) => [kind.name, answer.status, answer.code])),
  );
  const found = results.filter(({ kind, answer }) => kind.name === 'searchKnowledgeBase' && answer.text.includes('"score"'));
  report.check('searches find passages in the large base', found.length > 0, `${found.length} searches with passages`);
  report.check(
    `/healthz p99 under ${HEALTH_P99_MS} ms`,
    seen.health.p99 < HEALTH_P99_MS,
    `p99 ${seen.health.p99} ms, max ${seen.health.max} ms over ${seen.health.count} probes`,
  );
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
