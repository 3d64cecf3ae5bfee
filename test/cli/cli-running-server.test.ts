import { jest } from '@jest/globals';
import { statSync, readFileSync, existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { TEST_DATABASE_URL } from '../helpers/database.js';
import { CLI, operatorEnvironment, runScript, startServer, type Exit, type OperatorEnvironment, type ServerProcess } from '../support/entry-points.js';

// The operator CLI while the server runs. On the embedded database the server holds it, so the CLI
// sends its commands to the server's /operator door on its Unix socket (DATA_DIR/operator.json); on PostgreSQL it opens
// the database itself. Either way the operator never has to stop the server.
jest.setTimeout(120_000);

let operator: OperatorEnvironment;
let env: Record<string, string>;
let server: ServerProcess;
const cli = (...args: string[]) => runScript(CLI, args, env);
const json = (exit: Exit) =>
  exit.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

beforeAll(async () => {
  operator = await operatorEnvironment('cli-live');
  env = { ...operator.env, LOG_LEVEL: 'warn' };
  server = await startServer(env, { logLevel: 'debug' });
});
afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  await operator.drop();
});

it('creates an organization, grants it credits by name, issues a key and lists organizations while the server runs', async () => {
  const created = await cli('org:create', '--name', 'Acme', '--email', 'ops@acme.test');
  expect([created.code, created.stderr]).toEqual([0, '']);
  const acme = json(created)[0] as { organizationId: string; userId: string; apiKey: string };

  const granted = await cli('credits:add', '--org', 'acme', '--amount', '50', '--reason', 'first campaign');
  expect([granted.code, granted.stderr]).toEqual([0, '']);
  expect(json(granted)).toEqual([{ organizationId: acme.organizationId, amount: 50, creditBalance: 50, ledgerEntryId: expect.any(String) }]);

  const issued = await cli('keys:create', '--org', 'Acme', '--name', 'second');
  expect([issued.code, issued.stderr]).toEqual([0, '']);
  const key = json(issued)[0]!.apiKey as string;

  // The server sees what the CLI did at once: the new key works, and the balance is there.
  const me = await fetch(`${server.url}/api/users/me`, { headers: { 'x-api-key': key } });
  expect(((await me.json()) as { organizationId: string }).organizationId).toBe(acme.organizationId);
  const balance = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'x-api-key': acme.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ organization { creditBalance } }' }),
  });
  expect(await balance.json()).toEqual({ data: { organization: { creditBalance: 50 } } });

  const listed = await cli('org:list');
  expect(json(listed).map((row) => row.name)).toEqual(['Default', 'Acme']);
});

it('refuses as it does without a server: a usage error with the usage, an unknown or ambiguous name in one line; exit 1, never a stack', async () => {
  await cli('org:create', '--name', 'Twin', '--email', 'a@twin.test');
  await cli('org:create', '--name', 'twin', '--email', 'b@twin.test');
  const cases: [string[], RegExp][] = [
    [['credits:add', '--org', 'Nobody', '--amount', '5'], /^Error: No organization has the id or name "Nobody"; npm run cli -- org:list lists them\n$/],
    [
      ['credits:add', '--org', 'Twin', '--amount', '5'],
      /^Error: 2 organizations are named "Twin"; give --org its id \(npm run cli -- org:list lists them\)\n$/,
    ],
    [
      ['credits:add', '--org', '00000000-0000-4000-8000-000000000000', '--amount', '5'],
      /^Error: No organization with the id 00000000-0000-4000-8000-000000000000/,
    ],
    [['credits:add', '--org', 'Acme', '--amount', '0'], /^--amount is required \(a whole number from 1 to 1000000000\)\n\nUsage: npm run cli -- credits:add/],
    [['toString'], /^unknown command "toString"\n\nUsage: npm run cli -- <command>/],
    [['help', '__proto__'], /^unknown command "__proto__"\n/],
  ];
  for (const [args, message] of cases) {
    const result = await cli(...args);
    expect([args, result.code, result.stdout]).toEqual([args, 1, '']);
    expect(result.stderr).toMatch(message);
  }
});

/** One request to the operator door's Unix socket: its status, content type and body. */
function viaSocket(
  socketPath: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

(TEST_DATABASE_URL ? it.skip : it)(
  'the operator door: a 0600 socket named by a 0600 file of this server, not on the public listener, refused without its token, the token never in the log',
  async () => {
    const file = join(operator.dataDir, 'operator.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const endpoint = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; socket: string; token: string };
    expect(endpoint).toEqual({ pid: server.child.pid, socket: join(operator.dataDir, 'operator.sock'), token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(statSync(endpoint.socket).isSocket()).toBe(true);
    expect(statSync(endpoint.socket).mode & 0o777).toBe(0o600);

    // The public listener does not serve it, even to a loopback peer with the token.
    const publicly = await fetch(`${server.url}/operator/commands/org:list`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${endpoint.token}` },
      body: '{}',
    });
    expect(publicly.status).toBe(404);

    const send = (headers: Record<string, string>, body: unknown = {}, command = 'org:list') =>
      viaSocket(endpoint.socket, `/operator/commands/${command}`, headers, typeof body === 'string' ? body : JSON.stringify(body));
    const wrong: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }, { authorization: endpoint.token }, { 'x-api-key': endpoint.token }];
    for (const headers of wrong) {
      const refused = await send(headers);
      expect([refused.status, (JSON.parse(refused.body) as { code: string }).code]).toEqual([401, 'UNAUTHENTICATED']);
    }
    const auth = { authorization: `Bearer ${endpoint.token}` };
    const listed = await send(auth);
    expect(listed.status).toBe(200);
    expect((JSON.parse(listed.body) as { lines: unknown[] }).lines.length).toBeGreaterThan(0);
    // Whatever is sent, a 4xx in the problem shape, never a 500: commands and options named like what every object inherits too.
    const bad: [unknown, string, number][] = [
      [{}, 'org:delete', 404],
      [{}, '__proto__', 404],
      [{}, 'constructor', 404],
      [{}, 'toString', 404],
      [{ org: 'Acme' }, 'credits:add', 400],
      [{ nope: 'x' }, 'org:list', 400],
      [{ toString: 'x' }, 'org:list', 400],
      [{ constructor: 'x' }, 'keys:create', 400],
      ['{"__proto__": "x"}', 'org:list', 400],
      [{ org: ['Acme'], amount: '5' }, 'credits:add', 400],
      [[1], 'org:list', 400],
      ['{', 'org:list', 400],
    ];
    for (const [body, command, status] of bad) {
      const res = await send(auth, body, command);
      expect([command, body, res.status, res.type]).toEqual([command, body, status, 'application/problem+json; charset=utf-8']);
    }

    const output = await server.outputWith('/operator/commands/org:list');
    expect(output).toContain('/operator/commands/org:list'); // the debug log has the requests ...
    expect(output).not.toContain(endpoint.token); // ... but never the token
  },
);

(TEST_DATABASE_URL ? it.skip : it)('once the server stops, the file is gone and the CLI opens the database itself', async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  expect(existsSync(join(operator.dataDir, 'operator.json'))).toBe(false);
  expect(existsSync(join(operator.dataDir, 'operator.sock'))).toBe(false);
  const granted = await cli('credits:add', '--org', 'Acme', '--amount', '5');
  expect([granted.code, granted.stderr]).toEqual([0, '']);
  expect(json(granted)[0]).toMatchObject({ amount: 5, creditBalance: 55 });
});
