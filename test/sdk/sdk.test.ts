// The SDK (sdk/, `npm run sdk`): its generated sources are what the code builds, and a consumer
// compiled with tsc against the packaged SDK talks to a live gateway on both doors.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REST_ROUTES } from '../../src/doors.js';
import { PACKAGE_VERSION, PROJECT_ROOT } from '../../src/common/package-info.js';
import { gatewaySchema } from '../../src/doors.js';
import { buildOpenApi } from '../../src/rest/openapi.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const execFileAsync = promisify(execFile);

const TSC = join(PROJECT_ROOT, 'node_modules/typescript/bin/tsc');

function run(args: string[], env: Record<string, string> = {}): string {
  try {
    return execFileSync(process.execPath, args, { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${args.join(' ')} failed:\n${failed.stdout ?? ''}${failed.stderr ?? failed.message}`, { cause: error });
  }
}

/** Without blocking: the gateway the child talks to runs in this process. */
async function runAsync(args: string[]): Promise<string> {
  try {
    return (await execFileAsync(process.execPath, args, { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 60_000 })).stdout;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${args.join(' ')} failed:\n${failed.stdout ?? ''}${failed.stderr ?? failed.message}`, { cause: error });
  }
}

// Under node_modules of the project, so that the SDK's own dependencies resolve from the project's.
function scratch(): string {
  const base = join(PROJECT_ROOT, 'node_modules/.cache');
  mkdirSync(base, { recursive: true });
  return mkdtempSync(join(base, 'sdk-test-'));
}

describe('the generated SDK sources are what the code builds (run npm run sdk)', () => {
  let dir: string;
  beforeAll(() => {
    dir = scratch();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sdk/src/generated/openapi.ts: the types of the OpenAPI document the code builds', async () => {
    const document = buildOpenApi(REST_ROUTES, await gatewaySchema(), PACKAGE_VERSION);
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document, null, 2));
    run(['node_modules/openapi-typescript/bin/cli.js', join(dir, 'openapi.json'), '-o', join(dir, 'openapi.ts')]);
    const checkedIn = readFileSync(join(PROJECT_ROOT, 'sdk/src/generated/openapi.ts'), 'utf8');
    expect(checkedIn).toBe(readFileSync(join(dir, 'openapi.ts'), 'utf8'));
    // and the served document is the same one the types come from
    expect(checkedIn).toContain('"/api/agents": {');
  });

  it('sdk/src/generated/graphql.ts: the typed documents of sdk/graphql over schema/schema.graphql', () => {
    const out = join(dir, 'graphql.ts');
    run(['node_modules/@graphql-codegen/cli/cjs/bin.js', '--config', 'codegen.sdk.ts'], { SDK_GRAPHQL_OUT: out });
    const checkedIn = readFileSync(join(PROJECT_ROOT, 'sdk/src/generated/graphql.ts'), 'utf8');
    expect(checkedIn).toBe(readFileSync(out, 'utf8'));
    expect(checkedIn).toContain('export const AgentsDocument');
  });
});

// A UI developer's file: it imports the package by name, as after `npm install ./sdk`. The
// expect-error lines make the compile fail if the SDK's types were loose (any) or wrong.
const CONSUMER = `
import { createGatewayClient, AgentsDocument, MeDocument, type ErrorCode, type ProblemDetails, type components } from '@telephony-agent-gateway/sdk';

const [baseUrl, apiKey] = process.argv.slice(2) as [string, string];
const client = createGatewayClient({ baseUrl, apiKey });

const created = await client.rest.POST('/api/agents', {
  body: { name: 'SDK agent', instructions: 'Answer briefly.', modelConfig: { model: 'builtin/echo' } },
});
if (!created.data) throw new Error('create failed: ' + JSON.stringify(created.error));
const agent: components['schemas']['Agent'] = created.data;
const version: number = agent.version;
// Fields every answer carries are required in the document (nullable where they can be null): no \`!\`, no \`?? null\`.
const description: string | null = agent.description;
const voiceConfig: components['schemas']['VoiceConfig'] | null = agent.voiceConfig;

const listed = await client.rest.GET('/api/agents', {
  params: { query: { search: 'sdk', limit: 5, sortBy: 'name', sortOrder: 'asc', status: 'draft' } },
});
const names: string[] = (listed.data?.data ?? []).map((item) => item.name);
const total: number | undefined = listed.data?.meta.total;

const missing = await client.rest.GET('/api/agents/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
const notFound: ProblemDetails | undefined = missing.error;
const code: ErrorCode | undefined = notFound?.code;

const refused = await client.rest.GET('/api/agents', { params: { query: { limit: 1000 } } });
const fields: string[] = (refused.error?.errors ?? []).map((error) => error.field);

const me = await client.graphql(MeDocument);
const graph = await client.graphql(AgentsDocument, { search: 'sdk', limit: 5 });
const graphNames: string[] = graph.data?.agents.data.map((item) => item.name) ?? [];
const graphRefused = await client.graphql(AgentsDocument, { limit: 1000 });
const graphCode: ErrorCode | undefined = graphRefused.errors?.[0]?.extensions.code;

export function typesAreChecked(): void {
  // @ts-expect-error limit is a number
  void client.rest.GET('/api/agents', { params: { query: { limit: 'five' } } });
  // @ts-expect-error no such query parameter
  void client.rest.GET('/api/agents', { params: { query: { colour: 'red' } } });
  // @ts-expect-error status is one of draft, active, archived
  void client.rest.GET('/api/agents', { params: { query: { status: 'sleeping' } } });
  // @ts-expect-error instructions are required
  void client.rest.POST('/api/agents', { body: { name: 'x', modelConfig: { model: 'builtin/echo' } } });
  // @ts-expect-error no such route
  void client.rest.GET('/api/agentz');
  // @ts-expect-error limit is an Int
  void client.graphql(AgentsDocument, { limit: '5' });
  // @ts-expect-error a problem's code is one of the error codes
  const wrong: ErrorCode = 'TEAPOT';
  void wrong;
}

console.log(JSON.stringify({
  agentId: agent.id, version, description, voiceConfig, names, total,
  missingStatus: missing.response.status, code, detail: notFound?.detail,
  refusedStatus: refused.response.status, refusedCode: refused.error?.code, fields,
  me: me.data?.me.organization.name, graphNames, graphStatus: graphRefused.status, graphCode,
}));
`;

describe('a consumer compiled against the SDK, on a live gateway', () => {
  let app: TestApp;
  let dir: string;
  beforeAll(async () => {
    app = await startTestApp();
    dir = scratch();
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await app.close();
  });

  it('creates an agent, lists agents with typed query parameters, reads typed problem details, runs a typed GraphQL query', async () => {
    const org = await app.organization('SDK Org');
    const other = await app.organization('SDK Other');
    await other.rest.post('/api/agents', { name: 'SDK agent elsewhere', instructions: 'x', modelConfig: { model: 'builtin/echo' } });

    // The package as npm installs it: its package.json and what tsc builds from sdk/src.
    const pkg = join(dir, 'node_modules/@telephony-agent-gateway/sdk');
    mkdirSync(pkg, { recursive: true });
    copyFileSync(join(PROJECT_ROOT, 'sdk/package.json'), join(pkg, 'package.json'));
    run([TSC, '-p', 'sdk/tsconfig.json', '--outDir', join(pkg, 'dist')]);

    writeFileSync(join(dir, 'consumer.ts'), CONSUMER);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        // skipLibCheck as `tsc --init` sets it: the consumer is checked against the SDK's declarations,
        // which are not checked again themselves (tsc made them), nor are @types/node's (2 s of CPU).
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, types: ['node'], outDir: '.' },
        files: ['consumer.ts'],
      }),
    );
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    run([TSC, '-p', join(dir, 'tsconfig.json')]);

    const out = JSON.parse(await runAsync([join(dir, 'consumer.js'), app.baseUrl, org.apiKey]));
    expect(out.version).toBe(1);
    expect(out.description).toBeNull();
    expect(out.voiceConfig).toBeNull();
    expect(out.names).toEqual(['SDK agent']);
    expect(out.total).toBe(1);
    expect(out.missingStatus).toBe(404);
    expect(out.code).toBe('NOT_FOUND');
    expect(typeof out.detail).toBe('string');
    expect(out.refusedStatus).toBe(400);
    expect(out.refusedCode).toBe('BAD_USER_INPUT');
    expect(out.fields).toContain('limit');
    expect(out.me).toBe('SDK Org');
    expect(out.graphNames).toEqual(['SDK agent']);
    expect(out.graphStatus).toBe(400); // the same bad input, the same code on both doors
    expect(out.graphCode).toBe('BAD_USER_INPUT');

    // the agent the SDK made is there, and only in its organization
    expect((await org.rest.get(`/api/agents/${out.agentId}`)).status).toBe(200);
    expect((await other.rest.get(`/api/agents/${out.agentId}`)).status).toBe(404);
  });
});
