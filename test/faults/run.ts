// `npm run test:faults`: the gateway under faults, against its own throwaway PostgreSQL cluster (and, for
// the embedded-tenants scenario, on the embedded PGlite).
//   1. PostgreSQL restarted under load (pg_ctl stop -m immediate, then -m fast)
//   2. SIGTERM under load
//   3. an exhausted connection pool
//   4. a response-size bomb (answers over RESPONSE_MAX_BYTES beside large allowed ones)
//   5. a search storm (concurrent knowledge searches and retrieving messages over a few MB)
//   6. a subscription bomb (subscriptions whose every event is over RESPONSE_MAX_BYTES, events firing)
//   7. an SSE flood (one key opening execution streams over and over, readers and silent readers)
//   8. hostile analysis plans (an "$async" schema, a schema bomb, backtracking patterns) while calls are analysed
//   9. one tenant loading the embedded database (imports and a campaign on PGlite) while another is timed
// One line per assertion, a summary, exit code 1 on any failure (with the gateways' log tails).
// `--json FILE` also writes {numPassedTests, numFailedTests}, the shape .ci/run adds up.
// FAULTS_ONLY=pg-restart,sigterm,pool,response-size,search-storm,subscription-bomb,sse-flood,hostile-plan,embedded-tenants runs some scenarios; FAULTS_KEEP_LOGS=1 keeps the logs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPgCluster, withDatabase, type PgCluster } from '../support/pg-cluster.js';
import { Report } from './report.js';
import { killAllGateways, type GatewayProcess } from './server.js';
import { withClient, type ScenarioContext } from './scenarios/context.js';
import { pgRestartScenario } from './scenarios/pg-restart.js';
import { poolExhaustionScenario } from './scenarios/pool-exhaustion.js';
import { responseSizeScenario } from './scenarios/response-size.js';
import { searchStormScenario } from './scenarios/search-storm.js';
import { sigtermScenario } from './scenarios/sigterm.js';
import { subscriptionBombScenario } from './scenarios/subscription-bomb.js';
import { sseFloodScenario } from './scenarios/sse-flood.js';
import { hostilePlanScenario } from './scenarios/hostile-plan.js';
import { embeddedTenantsScenario } from './scenarios/embedded-tenants.js';

const SCENARIOS: [string, (ctx: ScenarioContext) => Promise<void>][] = [
  ['pg-restart', pgRestartScenario],
  ['sigterm', sigtermScenario],
  ['pool', poolExhaustionScenario],
  ['response-size', responseSizeScenario],
  ['search-storm', searchStormScenario],
  ['subscription-bomb', subscriptionBombScenario],
  ['sse-flood', sseFloodScenario],
  ['hostile-plan', hostilePlanScenario],
  ['embedded-tenants', embeddedTenantsScenario],
];

const jsonFlag = process.argv.indexOf('--json');
const jsonFile = jsonFlag >= 0 ? process.argv[jsonFlag + 1] : undefined;
const only = process.env.FAULTS_ONLY?.split(',').filter(Boolean);

let cluster: PgCluster | undefined;
const logDir = mkdtempSync(join(tmpdir(), 'gateway-faults-'));
let keepLogs = process.env.FAULTS_KEEP_LOGS === '1';

function cleanup(): void {
  killAllGateways();
  cluster?.destroy();
  if (keepLogs) console.log(`the gateways' logs are kept in ${logDir}`);
  else rmSync(logDir, { recursive: true, force: true });
}

process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    console.log(`\n${signal}: stopping`);
    process.exit(130);
  });
}

async function main(): Promise<number> {
  const started = Date.now();
  const report = new Report();
  cluster = await startPgCluster();
  console.log(`PostgreSQL on port ${cluster.port}; logs in ${logDir}`);
  const adminUrl = cluster.url;
  for (const [name, scenario] of SCENARIOS) {
    if (only && !only.includes(name)) continue;
    const watched: GatewayProcess[] = [];
    const failedBefore = report.summary().failed;
    const ctx: ScenarioContext = {
      cluster,
      report,
      logDir,
      async createDatabase(database) {
        await withClient(adminUrl, (client) => client.query(`create database ${database}`));
        return withDatabase(adminUrl, database);
      },
      watch: (gateway) => watched.push(gateway),
    };
    const scenarioStarted = Date.now();
    try {
      await scenario(ctx);
    } catch (error) {
      report.check(`${name} ran to the end`, false, error instanceof Error ? (error.stack ?? error.message) : String(error));
    } finally {
      for (const gateway of watched) gateway.kill();
      // Each scenario's wall time, so a slow one shows in CI's log (the whole run should stay under 15 minutes).
      console.log(`(${name}: ${((Date.now() - scenarioStarted) / 1000).toFixed(1)} s)`);
    }
    if (report.summary().failed > failedBefore) {
      for (const gateway of watched) {
        console.log(`\n--- last lines of ${gateway.logFile}`);
        console.log(gateway.logTail(60));
        console.log('---');
      }
    }
  }
  const { passed, failed } = report.summary();
  console.log(`\n${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`faults: ${passed} passed, ${failed} failed`);
  keepLogs ||= failed > 0;
  if (jsonFile) writeFileSync(jsonFile, JSON.stringify({ numPassedTests: passed, numFailedTests: failed }));
  return failed === 0 && passed > 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('the fault script failed:', error);
    keepLogs = true;
    process.exit(1);
  },
);
