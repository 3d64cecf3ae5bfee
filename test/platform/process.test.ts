import { jest } from '@jest/globals';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { TEST_DATABASE_URL } from '../helpers/database.js';
import { freePort } from '../support/pg-cluster.js';
import {
  CLI,
  MAIN,
  ROOT,
  operatorEnvironment,
  runScript,
  type OperatorEnvironment,
  startServer as startServerProcess,
  type ServerProcess,
} from '../support/entry-points.js';

// The real entry points, as an operator runs them (the build `npm start` runs; pretest builds it):
// the CLI, the server, a restart, SIGTERM.
const startServer = (env: Record<string, string>) => startServerProcess(env);

async function stop(server: ServerProcess): Promise<number | null> {
  server.child.kill('SIGTERM');
  return server.exited;
}

async function me(url: string, key: string) {
  const res = await fetch(`${url}/api/users/me`, { headers: { 'x-api-key': key } });
  return { status: res.status, body: (await res.json()) as { organizationId: string; organization: { name: string } } };
}

let operator: OperatorEnvironment;
let dataDir: string;
let env: Record<string, string>;

async function freshEnvironment({ empty = false } = {}): Promise<void> {
  operator = await operatorEnvironment('process', { empty });
  ({ dataDir, env } = operator);
  chmodSync(dataDir, 0o755); // as an operator's mkdir leaves it: the server tightens it
}

jest.setTimeout(120_000);

beforeEach(() => freshEnvironment());
afterEach(() => operator.drop());

it('org:create provisions an organization whose key the server accepts, and nothing is lost on restart', async () => {
  const created = await runScript(CLI, ['org:create', '--name', 'Acme', '--email', 'admin@acme.test'], env);
  expect(created.code).toBe(0);
  const provisioned = JSON.parse(created.stdout.trim()) as { organizationId: string; userId: string; apiKey: string };
  expect(Object.keys(provisioned).sort()).toEqual(['apiKey', 'organizationId', 'userId']);

  let server = await startServer(env);
  const first = await me(server.url, provisioned.apiKey);
  expect(first.status).toBe(200);
  expect(first.body.organization.name).toBe('Acme');
  const keyRes = await fetch(`${server.url}/api/auth/api-keys`, {
    method: 'POST',
    headers: { 'x-api-key': provisioned.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'kept', prefix: 'kept_' }),
  });
  const { secret } = (await keyRes.json()) as { secret: string };
  const token = ((await (await fetch(`${server.url}/api/auth/token`, { method: 'POST', headers: { 'x-api-key': secret } })).json()) as { accessToken: string })
    .accessToken;

  if (!TEST_DATABASE_URL) {
    // The server holds the embedded database: the CLI has it run the command (test/cli/cli-running-server.test.ts).
    const busy = await runScript(CLI, ['org:create', '--name', 'Busy', '--email', 'b@busy.test'], env);
    expect([busy.code, busy.stderr]).toEqual([0, '']);
    expect((await me(server.url, (JSON.parse(busy.stdout) as { apiKey: string }).apiKey)).body.organization.name).toBe('Busy');
  }

  expect(await stop(server)).toBe(0);
  server = await startServer(env);
  expect((await me(server.url, secret)).status).toBe(200);
  const withToken = await fetch(`${server.url}/api/users/me`, { headers: { authorization: `Bearer ${token}` } });
  expect(withToken.status).toBe(200);
  expect(await stop(server)).toBe(0);
});

it("the first start writes the Default organization's key to a 0600 file in a 0700 DATA_DIR, and prints only where it is", async () => {
  // A DATA_DIR with nothing in it: the embedded database too is made by this start.
  await operator.drop();
  await freshEnvironment({ empty: true });
  let server = await startServer(env);
  const file = join(dataDir, 'first-api-key');
  expect(server.output()).toContain(`Its API key is in ${file}`);
  // What the guides do with it: keep the file and read it; and the one command for another key.
  expect(server.output()).toContain('the guides read it from there, so keep that file. Another key: npm run cli -- keys:create --org Default');
  expect(server.output()).not.toMatch(/delete/i);
  const key = readFileSync(file, 'utf8').trim();
  expect(key).toMatch(/^tag_/);
  expect(server.output()).not.toContain(key);
  expect((await me(server.url, key)).body.organization.name).toBe('Default');
  const another = await runScript(CLI, ['keys:create', '--org', 'Default'], env);
  expect([another.code, another.stderr]).toEqual([0, '']);
  expect((await me(server.url, (JSON.parse(another.stdout) as { apiKey: string }).apiKey)).body.organization.name).toBe('Default');
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(statSync(dataDir).mode & 0o777).toBe(0o700);
  expect(statSync(join(dataDir, 'jwt-secret')).mode & 0o777).toBe(0o600);
  // Nothing the gateway wrote under DATA_DIR (the embedded database included) is open to other users.
  const open = readdirSync(dataDir, { recursive: true, encoding: 'utf8' }).filter((name) => (statSync(join(dataDir, name)).mode & 0o077) !== 0);
  expect(open).toEqual([]);
  expect(await stop(server)).toBe(0);
  // Every line the server logged is written once it has ended: none holds the key.
  expect(server.output()).not.toContain(key);
  rmSync(file);
  server = await startServer(env);
  expect(server.output()).not.toContain('API key is in');
  expect(existsSync(file)).toBe(false);
  expect(await stop(server)).toBe(0);
});

it('BOOTSTRAP_API_KEY is registered as the first key, so scripts can know it', async () => {
  const bootstrap = 'bootstrap_' + 'k'.repeat(32);
  const server = await startServer({ ...env, BOOTSTRAP_API_KEY: bootstrap });
  expect((await me(server.url, bootstrap)).status).toBe(200);
  expect(await stop(server)).toBe(0);
  // Read once the server has ended: every line it logged is written by then.
  expect(server.output()).not.toContain(bootstrap);
});

it('SIGTERM: /readyz answers 503 while the listener stays open for SHUTDOWN_DRAIN_MS, then the process exits 0', async () => {
  const server = await startServer({ ...env, SHUTDOWN_DRAIN_MS: '1500' });
  const signalled = Date.now();
  server.child.kill('SIGTERM');
  const answers: number[] = [];
  let lastAnsweredAfter = 0;
  let refusedAfter: number | undefined;
  // Until the listener refuses a connection or the process has exited (it may exit between two probes).
  while (server.child.exitCode === null && refusedAfter === undefined) {
    try {
      answers.push((await fetch(`${server.url}/readyz`)).status);
      lastAnsweredAfter = Date.now() - signalled;
    } catch {
      refusedAfter = Date.now() - signalled;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // The first probe may be answered before the process handles the signal; all later ones are 503.
  expect(answers.slice(1).length).toBeGreaterThan(5);
  expect(answers.slice(1).every((status) => status === 503)).toBe(true);
  // The listener stayed open (answering 503) for the drain, and closed only after it.
  expect(lastAnsweredAfter).toBeGreaterThanOrEqual(1300);
  if (refusedAfter !== undefined) expect(refusedAfter).toBeGreaterThanOrEqual(1400);
  expect(await server.exited).toBe(0);
});

// A preload that makes a stray rejection (SIGHUP) or an uncaught exception (SIGUSR2) inside the server.
const STRAY = `--import ${ROOT}test/support/stray-errors.mjs`;

it('a promise rejection nothing handled is logged with its stack, and the server goes on serving', async () => {
  const server = await startServer({ ...env, NODE_OPTIONS: STRAY });
  server.child.kill('SIGHUP');
  const output = await server.outputWith('a stray rejection the test made');
  expect(output).toMatch(/"event":"unhandledRejection"/);
  expect(output).toMatch(/"stack":"Error: a stray rejection the test made\\n/);
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  expect(server.child.exitCode).toBeNull();
  expect(await stop(server)).toBe(0);
});

it('an exception nothing caught stops the server through the SIGTERM drain, exit code 1', async () => {
  const server = await startServerProcess({ ...env, SHUTDOWN_DRAIN_MS: '200', NODE_OPTIONS: STRAY }, { logLevel: 'info' });
  server.child.kill('SIGUSR2');
  expect(await server.exited).toBe(1);
  const lines = server.output();
  expect(lines).toMatch(/"level":60,.*"message":"an uncaught exception the test made".*"event":"uncaughtException"/);
  // not the abrupt exit: not ready, drained, requests in flight finished, the database closed
  expect(lines).toMatch(/"signal":"uncaughtException".*shutting down: not ready, draining/);
  expect(lines).toMatch(/"msg":"stopped"/);
});

it.each([
  ['PORT', 'abc', /PORT must be an integer/],
  ['LOG_LEVEL', 'loud', /LOG_LEVEL must be one of/],
  ['DATABASE_URL', 'mysql://x', /DATABASE_URL must start with postgres/],
  ['JWT_SECRET', 'short', /JWT_SECRET must be at least 32 characters/],
])('a bad %s stops the start with one clear line', async (name, value, message) => {
  const result = await runScript(MAIN, [], { ...env, [name]: value });
  expect(result.code).toBe(1);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).toMatch(message);
});

it('the CLI explains its usage instead of failing obscurely', async () => {
  const result = await runScript(CLI, ['org:create', '--name', 'NoEmail'], env);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('--email is required');
  expect(result.stderr).toContain('Usage: npm run cli');
});

it('an unreachable DATABASE_URL stops the start with one line naming the variable and the address, not the password', async () => {
  const result = await runScript(MAIN, [], { ...env, DATABASE_URL: 'postgres://gateway:s3cret-pw@127.0.0.1:1/gateway' });
  expect(result.code).toBe(1);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).toMatch(/^Cannot start: DATABASE_URL: cannot reach PostgreSQL at 127\.0\.0\.1:1 \(connect ECONNREFUSED/);
  expect(result.stderr).not.toContain('s3cret-pw');
});

(TEST_DATABASE_URL ? it : it.skip)('a DATABASE_URL naming a missing database its user may not create says so, naming the variable', async () => {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  const role = `gateway_nocreate_${randomUUID().slice(0, 8)}`;
  await admin.query(`create role ${role} login nocreatedb`);
  try {
    const url = new URL(TEST_DATABASE_URL!);
    url.username = role;
    url.pathname = `/missing_${randomUUID().slice(0, 8)}`;
    const result = await runScript(MAIN, [], { ...env, DATABASE_URL: url.toString() });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(
      /^Cannot start: DATABASE_URL: the database "missing_\w+" does not exist at .* may not create it \(permission denied to create database\); create it/,
    );
  } finally {
    await admin.query(`drop role if exists ${role}`);
    await admin.end();
  }
});

it('a port in use stops the start with one line naming PORT, before a first organization is created and its key printed', async () => {
  const { createServer } = await import('node:net');
  const taken = createServer();
  const port = await freePort();
  await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
  try {
    const result = await runScript(MAIN, [], { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' });
    expect(result.code).toBe(1);
    expect(result.stdout).not.toContain('API key is in');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(new RegExp(`^Cannot start: PORT ${port} is already in use`));
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
  // The organization was not made then: the first start that can listen makes it and stores its key.
  expect(existsSync(join(dataDir, 'first-api-key'))).toBe(false);
  const server = await startServer(env);
  expect(server.output()).toContain(`Its API key is in ${join(dataDir, 'first-api-key')}`);
  expect(await stop(server)).toBe(0);
});
