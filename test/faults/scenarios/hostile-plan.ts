// Hostile analysis plans: one tenant's agents carry the plans of issue #39 (an "$async" schema, the
// schema bomb of three nested arrays of 1000, a pattern that backtracks on V8 against the caller's
// words) while their campaigns' calls are analysed, and another tenant's requests are timed. Saving such
// a plan is refused; plans stored before the bounds existed (planted here in the database, as an upgrade
// finds them) are refused when they would run; a pattern that backtracks on V8 runs on RE2. The process
// is alive at the end and /healthz stays quick.
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { sample } from '../report.js';
import { sleep, startGateway } from '../server.js';
import type { ScenarioContext } from './context.js';
import { call, checkResponsiveness, createOrganization, watchResponsiveness } from './stall.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const CONTACTS = 6; // per campaign; the simulated dialer answers most of them
const UNTIL_ANALYSED_MS = 120_000;
// /healthz and the other organization while the hostile calls are analysed: before the fix the process
// died (H1, H2) or /healthz stalled for minutes (H3: each caller character doubles the time).
const HEALTH_P99_MS = 500;
const ME_MAX_MS = 2000;
const RSS_GROWTH_MIB = 300;

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });
const LONG_A = `${'a'.repeat(48)}!`;

/** Each hostile plan: saved through the door (refused), or planted as stored before its bound; what its calls' analyses must say. */
const PLANS: { name: string; structuredData: Record<string, unknown>; planted: boolean; utterances: string[]; error: RegExp }[] = [
  {
    name: 'H1 "$async"',
    structuredData: object({ heard: { type: 'string', pattern: '^nothing said matches this$' } }, { $async: true }),
    planted: true,
    utterances: ['Monday is fine.', 'Goodbye then'],
    error: /^The analysis plan is no longer accepted: .*uses "\$async"/,
  },
  {
    name: 'H2 the schema bomb',
    structuredData: object({
      a: {
        type: 'array',
        minItems: 1000,
        items: { type: 'array', minItems: 1000, items: { type: 'array', minItems: 1000, items: { type: 'string', minLength: 100 } } },
      },
    }),
    planted: true,
    utterances: ['Monday is fine.', 'Goodbye then'],
    error: /^The analysis plan is no longer accepted: .*minItems is 1000; at most 100/,
  },
  {
    name: 'H3 a lookahead pattern that backtracks on V8',
    structuredData: object({ heard: { type: 'string', pattern: '^(?=a)(a+)+$' } }),
    planted: true,
    utterances: [LONG_A, 'Goodbye then'],
    error: /^The analysis plan is no longer accepted: .*pattern the linear-time engine \(RE2\) cannot run/,
  },
  {
    name: 'H3 ^(a+)+$ against a long caller line (accepted: it runs on RE2)',
    structuredData: object({ heard: { type: 'string', pattern: '^(a+)+$' } }),
    planted: false,
    utterances: [LONG_A, 'Goodbye then'],
    error: /^The model answered outside the schema twice: \/data\/heard must match pattern/,
  },
];

function grantCredits(databaseUrl: string, amount: number): void {
  execFileSync(process.execPath, ['dist/src/cli.js', 'credits:add', '--org', 'Default', '--amount', String(amount)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', JWT_SECRET: 'faults-jwt-secret-that-is-long-enough-0123456789' },
    encoding: 'utf8',
  });
}

export async function hostilePlanScenario(ctx: ScenarioContext): Promise<void> {
  const { report } = ctx;
  report.section(`hostile analysis plans (${PLANS.length} campaigns of ${CONTACTS} calls, analysed by builtin/echo, while another organization is timed)`);
  const databaseUrl = await ctx.createDatabase('faults_hostile_plan');
  const gateway = await startGateway('hostile-plan', ctx.logDir, {
    DATABASE_URL: databaseUrl,
    RUNNER_ENABLED: 'true',
    RUNNER_INTERVAL_MS: '100',
    DIALER_SPEED_MS: '0',
    DIALER_SEED: 'hostile-plan',
  });
  ctx.watch(gateway);
  const other = createOrganization(databaseUrl, 'Other');
  grantCredits(databaseUrl, 10_000);
  const url = gateway.url;

  // Saving any of the planted plans through the door is refused, the same 400 as every bad plan.
  const refusals = [];
  for (const plan of PLANS.filter((each) => each.planted)) {
    const res = await call(`${url}/api/agents`, {
      body: {
        name: 'Refused',
        instructions: 'x',
        modelConfig: { model: 'builtin/echo' },
        analysisPlan: { summary: false, structuredData: plan.structuredData },
      },
    });
    refusals.push({ plan: plan.name, status: res.status, code: res.code });
  }
  report.check(
    'saving an "$async" plan, the schema bomb or a pattern RE2 cannot run answers 400 BAD_USER_INPUT',
    refusals.every((each) => each.status === 400 && each.code === 'BAD_USER_INPUT'),
    sample(refusals, 3),
  );

  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const contacts = Array.from({ length: PLANS.length * CONTACTS }, (_, i) => ({ name: `Hostile ${i}`, phone: `+1202555${String(1000 + i)}` }));
  const imported = await call(`${url}/api/contacts/import`, { body: { contacts } });
  if (imported.status !== 201) throw new Error(`could not import the contacts: ${imported.status} ${imported.text.slice(0, 300)}`);
  const contactIds = (await db.query<{ id: string }>('select id from contacts order by phone')).rows.map((row) => row.id);

  // One agent, audience and campaign per plan; a planted plan is written as one stored before its bound.
  const campaigns: { plan: (typeof PLANS)[number]; executionId: string }[] = [];
  for (const [index, plan] of PLANS.entries()) {
    const safe = { summary: false, structuredData: object({ heard: { type: 'string' } }) };
    const agent = await call(`${url}/api/agents`, {
      body: {
        name: plan.name,
        instructions: 'Be brief.',
        modelConfig: { model: 'builtin/echo' },
        analysisPlan: plan.planted ? safe : { summary: false, structuredData: plan.structuredData },
      },
    });
    if (agent.status !== 201) throw new Error(`could not create the agent of ${plan.name}: ${agent.status} ${agent.text.slice(0, 300)}`);
    const agentId = (JSON.parse(agent.text) as { id: string }).id;
    if (plan.planted) {
      const stored = { summary: false, structuredData: plan.structuredData, fields: Object.keys(plan.structuredData.properties as object) };
      await db.query('update agents set analysis_plan = $1::jsonb where id = $2', [JSON.stringify(stored), agentId]);
    }
    // A program activates only with an active agent.
    const activeAgent = await call(`${url}/api/agents/${agentId}/activate`, { method: 'POST' });
    if (activeAgent.status !== 200) throw new Error(`could not activate the agent of ${plan.name}: ${activeAgent.status} ${activeAgent.text.slice(0, 300)}`);
    const audience = JSON.parse((await call(`${url}/api/audience`, { body: { name: plan.name } })).text) as { id: string };
    await call(`${url}/api/audience/${audience.id}/members`, { body: { contactIds: contactIds.slice(index * CONTACTS, (index + 1) * CONTACTS) } });
    const program = JSON.parse(
      (
        await call(`${url}/api/programs`, {
          body: {
            name: plan.name,
            kind: 'campaign',
            agentId,
            audienceId: audience.id,
            callingWindow: { startTime: '00:00', endTime: '23:59', daysOfWeek: [1, 2, 3, 4, 5, 6, 7] },
            maxConcurrentCalls: 3,
            retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 },
            simulatedCaller: { utterances: plan.utterances },
          },
        })
      ).text,
    ) as { id: string };
    const activated = await call(`${url}/api/programs/${program.id}/activate`, { method: 'POST' });
    if (activated.status !== 200) throw new Error(`could not activate the program of ${plan.name}: ${activated.status} ${activated.text.slice(0, 300)}`);
    const execution = await call(`${url}/api/programs/${program.id}/executions`, { method: 'POST' });
    if (execution.status !== 201) throw new Error(`could not create the execution of ${plan.name}: ${execution.status} ${execution.text.slice(0, 300)}`);
    campaigns.push({ plan, executionId: (JSON.parse(execution.text) as { id: string }).id });
  }

  const baselineWatch = watchResponsiveness(gateway, other.apiKey);
  await baselineWatch.ready;
  await sleep(3000);
  const baseline = await baselineWatch.stop();
  report.note(
    `before the calls: /healthz ${baseline.health.count} probes p50 ${baseline.health.p50} ms, p99 ${baseline.health.p99} ms; RSS ${baseline.rss.end.toFixed(0)} MiB`,
  );

  const watch = watchResponsiveness(gateway, other.apiKey);
  await watch.ready;
  for (const campaign of campaigns) await call(`${url}/api/executions/${campaign.executionId}/start`, { method: 'POST' });
  // Until every campaign has ended and no answered call's analysis is pending (or the gateway is gone).
  const ids = campaigns.map((campaign) => campaign.executionId);
  const deadline = Date.now() + UNTIL_ANALYSED_MS;
  let settled = false;
  while (!settled && Date.now() < deadline && gateway.exit() === undefined) {
    await sleep(250);
    try {
      const { rows } = await db.query<{ running: number; pending: number }>(
        `select (select count(*)::int from executions where id = any($1) and status <> 'completed') as running,
                (select count(*)::int from calls where execution_id = any($1) and (analysis is null and outcome = 'answered' or analysis->>'status' = 'pending')) as pending`,
        [ids],
      );
      settled = rows[0]!.running === 0 && rows[0]!.pending === 0;
    } catch {
      // the database is the cluster's; a failed probe is tried again
    }
  }
  const seen = await watch.stop();
  const health = await call(`${url}/healthz`);
  report.note(
    `/healthz ${seen.health.count} probes p50 ${seen.health.p50} ms, p99 ${seen.health.p99} ms, max ${seen.health.max} ms; ` +
      `other organization ${seen.me.count} calls, p99 ${seen.me.p99} ms; RSS ${baseline.rss.end.toFixed(0)} → peak ${seen.rss.peak.toFixed(0)} MiB`,
  );
  report.check(
    'the process is alive at the end and /healthz answers 200',
    gateway.exit() === undefined && health.status === 200,
    `exit ${String(gateway.exit())}, /healthz ${String(health.status)}`,
  );
  report.check(`every campaign ended and every answered call was analysed within ${UNTIL_ANALYSED_MS / 1000} s`, settled);

  for (const campaign of campaigns) {
    const { rows } = await db.query<{ analysis: { status: string; error: string | null } | null }>(
      `select analysis from calls where execution_id = $1 and outcome = 'answered'`,
      [campaign.executionId],
    );
    const wrong = rows.filter((row) => row.analysis?.status !== 'failed' || !campaign.plan.error.test(row.analysis.error ?? ''));
    report.check(
      `${campaign.plan.name}: every answered call's analysis is failed, saying why`,
      rows.length > 0 && wrong.length === 0,
      rows.length === 0
        ? 'no call was answered'
        : `${rows.length} answered; ${sample(
            wrong.map((row) => row.analysis),
            2,
          )}`,
    );
  }
  await db.end();
  checkResponsiveness(report, seen, baseline, {
    fault: 'hostile plans',
    healthP99Ms: HEALTH_P99_MS,
    baselineFactor: 3,
    meMaxMs: ME_MAX_MS,
    rssGrowthMiB: RSS_GROWTH_MIB,
  });
}
