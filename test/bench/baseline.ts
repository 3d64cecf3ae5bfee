// The benchmark's baseline: a hand-written node:http + pg server that answers the five benchmarked
// requests with the same JSON as the gateway, each in ONE SQL statement (authentication included, as a
// CTE). It is what the hardware can do with this schema and this data, so the gateway is reported as
// a ratio of it. Self-contained (node:http, node:crypto, pg only) so that it runs with Node's own type
// stripping (`node test/bench/baseline.ts`), without the compiler hooks the harness uses.
//
// Env: DATABASE_URL (required), PORT (default 0 = any free port; the chosen one is printed as JSON on
// stdout), HOST (default 127.0.0.1), DB_POOL_MAX (default 10, the gateway's default).
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import pg from 'pg';
import { runAsProcess } from './contender-process.ts';

/** The two GraphQL operations the baseline answers, matched by their exact text. */
export const GRAPHQL_PROGRAMS = '{ programs(limit: 20) { data { id name executions { id status totalContacts audience { name contactCount } } } } }';
export const GRAPHQL_AGENTS = '{ agents(limit: 20) { data { id name conversations(limit: 5) { data { id status } } } } }';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Date columns as the gateway prints them: Date#toISOString(), millisecond precision, UTC. */
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The caller, exactly as src/modules/auth/auth.service.ts finds it: the SHA-256 of the x-api-key, an
 * active and unexpired key, its user (for the role); lastUsedAt written at most once a minute.
 */
const CALLER = `with caller as (
  select k.id, k.organization_id as org, u.role
  from api_keys k join users u on u.id = k.user_id
  where k.key_hash = $1 and k.is_active and (k.expires_at is null or k.expires_at > now())
), touched as (
  update api_keys set last_used_at = now()
  where id = (select id from caller) and (last_used_at is null or last_used_at <= now() - interval '60 seconds')
  returning id
)`;

/** An Agent as the REST door presents it (the GraphQL type's fields, in its order; never the policy). */
const agentJson = (a: string) => `json_build_object(
  'id', ${a}.id, 'createdAt', ${iso(`${a}.created_at`)}, 'updatedAt', ${iso(`${a}.updated_at`)},
  'name', ${a}.name, 'description', ${a}.description, 'instructions', ${a}.instructions,
  'firstMessage', ${a}.first_message, 'firstMessageMode', ${a}.first_message_mode,
  'variables', (select coalesce(json_agg(json_build_object('name', v.value->'name', 'default', v.value->'default', 'description', v.value->'description')
    order by v.n), '[]'::json) from jsonb_array_elements(${a}.variables) with ordinality as v(value, n)),
  'status', ${a}.status,
  'version', ${a}.version,
  'modelConfig', json_build_object('model', ${a}.model_config->'model', 'modelSettings', ${a}.model_config->'modelSettings',
    'providerOptions', ${a}.model_config->'providerOptions'),
  'voiceConfig', case when ${a}.voice_config is null then null else json_build_object('pipelineMode', ${a}.voice_config->'pipelineMode',
    'voiceId', ${a}.voice_config->'voiceId', 'stsProvider', ${a}.voice_config->'stsProvider',
    'sttProvider', ${a}.voice_config->'sttProvider', 'sttModel', ${a}.voice_config->'sttModel',
    'ttsProvider', ${a}.voice_config->'ttsProvider', 'ttsModel', ${a}.voice_config->'ttsModel',
    'language', ${a}.voice_config->'language') end,
  'memoryConfig', case when ${a}.memory_config is null then null else json_build_object('enabled', ${a}.memory_config->'enabled',
    'lastMessages', ${a}.memory_config->'lastMessages', 'semanticRecall', ${a}.memory_config->'semanticRecall') end,
  'metadata', ${a}.metadata, 'knowledgeBaseConfig', ${a}.knowledge_base_config,
  'resolutionCriteria', (select coalesce(json_agg(json_build_object('label', c.value->'label', 'description', c.value->'description')
    order by c.n), '[]'::json) from jsonb_array_elements(${a}.resolution_criteria) with ordinality as c(value, n)),
  'analysisPlan', case when ${a}.analysis_plan is null then null else json_build_object('summary', ${a}.analysis_plan->'summary',
    'structuredData', ${a}.analysis_plan->'structuredData') end,
  'createdBy', ${a}.created_by, 'deletedAt', ${iso(`${a}.deleted_at`)}, 'organizationId', ${a}.organization_id,
  'hasPolicy', coalesce(${a}.policy, '') <> '')`;

/** One count of an execution's outcome_counts (src/modules/programs/execution-outcomes.ts, outcomesOf): 0 when absent. */
const outcome = (e: string, key: string) => `coalesce((${e}.outcome_counts->>'${key}')::int, 0)`;

/** An execution as endpoint 9 shows it (src/modules/programs/programs.types.ts, EXECUTION_FIELDS). */
const executionJson = (e: string) => `json_build_object(
  'id', ${e}.id, 'programId', ${e}.program_id, 'organizationId', ${e}.organization_id, 'audienceId', ${e}.audience_id,
  'flowId', ${e}.flow_id, 'status', ${e}.status, 'totalContacts', ${e}.total_contacts, 'contactsCompleted', ${e}.contacts_completed,
  'contactsFailed', ${e}.contacts_failed, 'contactsPending', ${e}.contacts_pending, 'contactsInProgress', ${e}.contacts_in_progress,
  'scheduledStartAt', ${iso(`${e}.scheduled_start_at`)}, 'createdAt', ${iso(`${e}.created_at`)}, 'updatedAt', ${iso(`${e}.updated_at`)},
  'scheduledStopAt', ${iso(`${e}.scheduled_stop_at`)}, 'actualStartAt', ${iso(`${e}.actual_start_at`)},
  'actualEndAt', ${iso(`${e}.actual_end_at`)},
  'autoPauseRules', (select coalesce(json_agg(json_build_object('nodeId', r.value->'nodeId', 'threshold', r.value->'threshold',
    'resetOnResume', r.value->'resetOnResume') order by r.n), '[]'::json)
    from jsonb_array_elements(${e}.auto_pause_rules) with ordinality as r(value, n)),
  'creditsSpent', ${e}.credits_spent, 'contactsDoNotCall', ${e}.contacts_do_not_call,
  'outcomes', json_build_object('answered', ${outcome(e, 'answered')}, 'voicemail', ${outcome(e, 'voicemail')},
    'noAnswer', ${outcome(e, 'no_answer')}, 'busy', ${outcome(e, 'busy')}, 'failed', ${outcome(e, 'failed')},
    'doNotCall', ${outcome(e, 'do_not_call')}, 'notCalled', ${outcome(e, 'opted_out')} + ${outcome(e, 'contact_deleted')}),
  'variables', ${e}.variables)`;

/**
 * The gateway's page cursor (src/common/cursor.ts) for `direction` ('a', 'b', 'l'), a row key (JSON text
 * `[value, id]`, or null) and the page it leads to: base64url of its JSON, as JSON.stringify writes it.
 */
function cursorSql(direction: string, key: string, page: string): string {
  const json = `'[1,"' || ${direction} || '","createdAt","desc",' || coalesce(${key}, 'null') || ',' || (${page})::text || ']'`;
  return `rtrim(translate(encode(convert_to(${json}, 'UTF8'), 'base64'), E'+/\\n', '-_'), '=')`;
}

/** GET /api/agents?limit&page: the page and its meta, archived agents left out, newest first. $2 limit, $3 page. */
const LIST_AGENTS_SQL = `${CALLER},
page as (
  select a.* from agents a join caller on a.organization_id = caller.org
  where a.status <> 'archived' order by a.created_at desc, a.id desc limit $2 offset ($3 - 1) * $2
), total as (
  select count(*)::int as n from agents a join caller on a.organization_id = caller.org where a.status <> 'archived'
), keys as (
  select p.created_at as at, p.id, '[' || to_json(to_char(p.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))::text || ',' || to_json(p.id::text)::text || ']' as k from page p
)
select json_build_object(
  'data', coalesce((select json_agg(${agentJson('p')} order by p.created_at desc, p.id desc) from page p), '[]'::json),
  'meta', (select json_build_object('page', $3::int, 'limit', $2::int, 'total', t.n, 'totalPages', ceil(t.n::numeric / $2)::int,
    'hasNextPage', $3 < ceil(t.n::numeric / $2), 'hasPreviousPage', $3 > 1,
    'nextCursor', case when $3 < ceil(t.n::numeric / $2) then ${cursorSql("'a'", '(select k from keys order by at asc, id asc limit 1)', '$3 + 1')} end,
    'prevCursor', case when $3 > 1 then ${cursorSql("'b'", '(select k from keys order by at desc, id desc limit 1)', '$3 - 1')} end,
    'lastCursor', ${cursorSql("'l'", 'null', 'greatest(ceil(t.n::numeric / $2)::int, 1)')}) from total t)
) as body from caller`;

/** GET /api/programs/{id}/executions: null program_id = 404. $2 program id. */
const LIST_EXECUTIONS_SQL = `${CALLER},
program as (select p.id from programs p join caller on p.organization_id = caller.org where p.id = $2)
select (select id from program) as program_id,
  (select coalesce(json_agg(${executionJson('e')} order by e.created_at desc, e.id desc), '[]'::json)
   from executions e join caller c on e.organization_id = c.org where e.program_id = (select id from program)) as body
from caller`;

/** GRAPHQL_PROGRAMS: a page of 20 programs, their executions newest first, each with its audience and member count. */
const GRAPHQL_PROGRAMS_SQL = `${CALLER},
page as (
  select p.id, p.name, p.created_at from programs p join caller on p.organization_id = caller.org
  order by p.created_at desc, p.id desc limit 20
), execs as materialized (
  select e.id, e.program_id, e.status, e.total_contacts, e.audience_id, e.created_at
  from executions e join caller on e.organization_id = caller.org where e.program_id in (select id from page)
), audiences_of as materialized (
  -- materialized: each audience is counted once, not once per execution
  select au.id, json_build_object('name', au.name,
    'contactCount', (select count(*)::int from audience_members m where m.audience_id = au.id)) as json
  from audiences au join caller on au.organization_id = caller.org where au.id in (select audience_id from execs)
)
select json_build_object('data', json_build_object('programs', json_build_object('data', coalesce((
  select json_agg(json_build_object('id', p.id, 'name', p.name, 'executions', (
    select coalesce(json_agg(json_build_object('id', e.id, 'status', e.status, 'totalContacts', e.total_contacts, 'audience', au.json)
      order by e.created_at desc, e.id desc), '[]'::json)
    from execs e left join audiences_of au on au.id = e.audience_id where e.program_id = p.id
  )) order by p.created_at desc, p.id desc) from page p), '[]'::json)))) as body
from caller`;

/** GRAPHQL_AGENTS: a page of 20 agents (archived left out), each with its 5 newest conversations. */
const GRAPHQL_AGENTS_SQL = `${CALLER},
page as (
  select a.id, a.name, a.created_at from agents a join caller on a.organization_id = caller.org
  where a.status <> 'archived' order by a.created_at desc, a.id desc limit 20
)
select json_build_object('data', json_build_object('agents', json_build_object('data', coalesce((
  select json_agg(json_build_object('id', p.id, 'name', p.name, 'conversations', json_build_object('data', (
    select coalesce(json_agg(json_build_object('id', c.id, 'status', c.status) order by c.created_at desc, c.id desc), '[]'::json)
    from (
      select c.id, c.status, c.created_at from conversations c
      where c.agent_id = p.id and c.organization_id = (select org from caller)
      order by c.created_at desc, c.id desc limit 5
    ) c
  ))) order by p.created_at desc, p.id desc) from page p), '[]'::json)))) as body
from caller`;

/** POST /api/agents/{id}/test: the agent's prompt parts; a null status = 404. $2 agent id. */
const TEST_AGENT_SQL = `${CALLER}
select a.status, a.instructions, a.policy, a.model_config->>'model' as model, a.knowledge_base_config is not null as has_knowledge
from caller left join agents a on a.id = $2 and a.organization_id = caller.org`;

/** The statements, by request kind (for EXPLAIN when tuning). */
export const BASELINE_SQL = {
  'rest-agents': LIST_AGENTS_SQL,
  'rest-executions': LIST_EXECUTIONS_SQL,
  'graphql-programs': GRAPHQL_PROGRAMS_SQL,
  'graphql-agents': GRAPHQL_AGENTS_SQL,
  'rest-agent-test': TEST_AGENT_SQL,
};

// The builtin model's answer, as src/modules/models/builtin.model.ts and src/modules/agents/prompt.ts compute it.
const NO_PASSAGES_REPLY = "I don't have any knowledge-base passages about that.";

function countWords(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
}

function systemPrompt(instructions: string, policy: string | null): string {
  return policy ? `${instructions}\n\nPolicy (hidden from the caller):\n${policy}` : instructions;
}

function redactPolicy(text: string, policy: string | null): string {
  if (!policy) return text;
  const sentences = policy
    .split(/(?<=[.!?])\s+|\n+/u)
    .map((sentence) =>
      sentence
        .replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '')
        .split(/\s+/u)
        .filter((word) => word !== ''),
    )
    .filter((words) => words.length >= 2)
    .sort((a, b) => b.join(' ').length - a.join(' ').length);
  const escape = (word: string) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return sentences.reduce((redacted, words) => redacted.replace(new RegExp(words.map(escape).join('\\s+'), 'giu'), '[redacted]'), text);
}

// Plain fields, no parameter properties: Node's type stripping runs this file as it is.
class HttpError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const unauthenticated = () => new HttpError(401, 'UNAUTHENTICATED', 'The API key is unknown, inactive or expired');
const notFound = (what: string) => new HttpError(404, 'NOT_FOUND', `${what} not found`);

/** `suffix`: Apollo Server ends its JSON with a newline; the GraphQL answers do the same, so both send the same bytes. */
function send(res: ServerResponse, status: number, body: unknown, type = 'application/json; charset=utf-8', suffix = ''): void {
  const text = JSON.stringify(body) + suffix;
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'BAD_USER_INPUT', 'The body is not JSON');
  }
}

function keyHash(req: IncomingMessage): string {
  const key = req.headers['x-api-key'];
  if (typeof key !== 'string') throw new HttpError(401, 'UNAUTHENTICATED', 'Send x-api-key');
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function pageArg(value: string | null, fallback: number, max: number): number {
  if (value === null) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > max) throw new HttpError(400, 'BAD_USER_INPUT', 'page/limit out of range');
  return number;
}

export interface Baseline {
  server: Server;
  port: number;
  close(): Promise<void>;
}

export async function startBaseline(options: { databaseUrl: string; port?: number; host?: string; poolMax?: number }): Promise<Baseline> {
  const statementNames = new Map(Object.entries(BASELINE_SQL).map(([kind, sql]) => [sql, kind]));
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolMax ?? 10 });
  pool.on('error', () => {
    // an idle client lost its connection: the pool replaces it
  });

  /**
   * Runs the one statement of a request: no row = the key did not authenticate. Named, so each
   * connection parses it once and can keep its plan, as a hand-tuned server would.
   */
  async function one(sql: string, params: unknown[]): Promise<Record<string, unknown>> {
    const { rows } = await pool.query({ name: statementNames.get(sql), text: sql, values: params });
    if (rows.length === 0) throw unauthenticated();
    return rows[0] as Record<string, unknown>;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://baseline');
    const path = url.pathname;
    if (req.method === 'GET' && path === '/healthz') return send(res, 200, { status: 'ok' });

    if (req.method === 'GET' && path === '/api/agents') {
      const limit = pageArg(url.searchParams.get('limit'), 20, 100);
      const page = pageArg(url.searchParams.get('page'), 1, 1_000_000);
      const row = await one(LIST_AGENTS_SQL, [keyHash(req), limit, page]);
      return send(res, 200, row.body);
    }

    const executions = /^\/api\/programs\/([^/]+)\/executions$/.exec(path);
    if (req.method === 'GET' && executions) {
      const hash = keyHash(req);
      const id = decodeURIComponent(executions[1]!);
      // The gateway answers 404 for a non-UUID without asking for the program (but it has authenticated first).
      const row = await one(LIST_EXECUTIONS_SQL, [hash, UUID.test(id) ? id : null]);
      if (!row.program_id) throw notFound('Program');
      return send(res, 200, row.body);
    }

    const test = /^\/api\/agents\/([^/]+)\/test$/.exec(path);
    if (req.method === 'POST' && test) {
      const hash = keyHash(req);
      const body = (await readBody(req)) as { message?: unknown } | null;
      const message = body?.message;
      if (typeof message !== 'string' || message.length < 1 || message.length > 10_000) {
        throw new HttpError(400, 'BAD_USER_INPUT', 'message must be 1 to 10000 characters');
      }
      const id = decodeURIComponent(test[1]!);
      const agent = await one(TEST_AGENT_SQL, [hash, UUID.test(id) ? id : null]);
      if (!agent.status) throw notFound('Agent');
      if (agent.status === 'archived') throw new HttpError(409, 'CONFLICT', 'An archived agent cannot be tested');
      const model = String(agent.model);
      if ((model !== 'builtin/echo' && model !== 'builtin/extractive') || agent.has_knowledge) {
        throw new HttpError(501, 'NOT_IMPLEMENTED', 'The baseline answers builtin models without a knowledge base only');
      }
      const policy = agent.policy as string | null;
      const text = model === 'builtin/echo' ? `Echo: ${message.trim()}`.trimEnd() : NO_PASSAGES_REPLY;
      // The policy is no part of the usage a caller sees.
      const inputTokens = countWords([systemPrompt(String(agent.instructions), null), message].join('\n'));
      const outputTokens = countWords(text);
      return send(res, 200, {
        response: redactPolicy(text, policy),
        usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, model },
      });
    }

    if (req.method === 'POST' && path === '/graphql') {
      const hash = keyHash(req);
      const body = (await readBody(req)) as { query?: unknown } | null;
      const sql = body?.query === GRAPHQL_PROGRAMS ? GRAPHQL_PROGRAMS_SQL : body?.query === GRAPHQL_AGENTS ? GRAPHQL_AGENTS_SQL : null;
      if (!sql) return send(res, 400, { errors: [{ message: 'The baseline answers two operations only', extensions: { code: 'BAD_USER_INPUT' } }] });
      const row = await one(sql, [hash]);
      return send(res, 200, row.body, undefined, '\n');
    }

    throw new HttpError(404, 'NOT_FOUND', `No route ${req.method} ${path}`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const known = error instanceof HttpError;
      const status = known ? error.status : 500;
      if (!known) console.error(error);
      send(res, status, { status, code: known ? error.code : 'INTERNAL', detail: known ? error.message : 'internal error' }, 'application/problem+json');
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const address = server.address();
  return {
    server,
    port: typeof address === 'object' && address ? address.port : 0,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}

runAsProcess(import.meta.url, startBaseline);
