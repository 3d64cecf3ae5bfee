import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { CLI, operatorEnvironment, runScript, startServer, type Exit, type OperatorEnvironment } from '../support/entry-points.js';

// The operator CLI as a process (the build pretest makes), against a fresh PGlite DATA_DIR in /tmp,
// or a fresh PostgreSQL database when TEST_DATABASE_URL is set.
const cli = (...args: string[]) => runScript(CLI, args, env);

let operator: OperatorEnvironment;
let env: Record<string, string>;

jest.setTimeout(120_000);

beforeAll(async () => {
  operator = await operatorEnvironment('cli');
  env = { ...operator.env, LOG_LEVEL: 'warn' };
});
afterAll(() => operator.drop());

/** Starts the server on the same data, asks who each key is, stops it. */
async function whoAre(keys: string[]): Promise<({ id: string; organizationId: string } | number)[]> {
  const server = await startServer(env);
  try {
    return await Promise.all(
      keys.map(async (key) => {
        const res = await fetch(`${server.url}/api/users/me`, { headers: { 'x-api-key': key } });
        return res.ok ? ((await res.json()) as { id: string; organizationId: string }) : res.status;
      }),
    );
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
  }
}

const json = (exit: Exit) =>
  exit.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('help', () => {
  it('help lists every command; each command answers --help with its own usage, exit 0, touching no database', async () => {
    const help = await cli('help');
    expect(help.code).toBe(0);
    const listed = [...help.stdout.matchAll(/^ {2}([a-z]+:[a-z]+)\b/gm)].map((match) => match[1]);
    expect(listed).toEqual(['org:create', 'keys:create', 'credits:add', 'org:list', 'credentials:check', 'credentials:reset']);
    expect((await cli('--help')).stdout).toBe(help.stdout);
    expect((await cli()).stdout).toBe(help.stdout);
    for (const command of listed) {
      const own = await cli(command!, '--help');
      expect([command, own.code, own.stderr]).toEqual([command, 0, '']);
      expect(own.stdout).toMatch(new RegExp(`^Usage: npm run cli -- ${command}`));
      expect(own.stdout).not.toMatch(/Commands:/);
      expect((await cli('help', command!)).stdout).toBe(own.stdout);
    }
  });

  it('an unknown command or option says so, with the usage, exit 1', async () => {
    const unknown = await cli('org:delete');
    expect([unknown.code, unknown.stdout]).toEqual([1, '']);
    expect(unknown.stderr).toMatch(/^unknown command "org:delete"\n\nUsage: npm run cli/);
    const option = await cli('keys:create', '--organisation', 'x');
    expect(option.code).toBe(1);
    expect(option.stderr).toMatch(/--organisation/);
    expect(option.stderr).toContain('Usage: npm run cli -- keys:create');
  });
});

describe('keys:create and org:list', () => {
  let acme: { organizationId: string; userId: string; apiKey: string };
  let beta: { organizationId: string; userId: string; apiKey: string };

  beforeAll(async () => {
    const a = await cli('org:create', '--name', 'Acme', '--email', 'ops@shared.test');
    const b = await cli('org:create', '--name', 'Beta', '--email', 'ops@shared.test');
    expect([a.code, b.code]).toEqual([0, 0]);
    acme = json(a)[0] as typeof acme;
    beta = json(b)[0] as typeof beta;
  });

  it('keys:create --org prints a new key for the organization owner once, as JSON; both the old and new key work', async () => {
    const created = await cli('keys:create', '--org', acme.organizationId, '--name', 'replacement');
    expect(created.code).toBe(0);
    const [issued, ...more] = json(created);
    expect(more).toEqual([]);
    expect(Object.keys(issued!).sort()).toEqual(['apiKey', 'apiKeyId', 'organizationId', 'userId']);
    expect(issued).toMatchObject({ organizationId: acme.organizationId, userId: acme.userId });
    expect(issued!.apiKey).not.toBe(acme.apiKey);
    const byEmail = await cli('keys:create', '--org', beta.organizationId, '--email', 'OPS@shared.test');
    expect(json(byEmail)[0]).toMatchObject({ organizationId: beta.organizationId, userId: beta.userId });

    const answers = await whoAre([acme.apiKey, issued!.apiKey as string, json(byEmail)[0]!.apiKey as string, 'tag_not-a-key']);
    expect(answers).toEqual([
      expect.objectContaining({ id: acme.userId, organizationId: acme.organizationId }),
      expect.objectContaining({ id: acme.userId, organizationId: acme.organizationId }),
      expect.objectContaining({ id: beta.userId, organizationId: beta.organizationId }),
      401,
    ]);
  });

  it('refuses in one line: no target, an unknown organization, an email of several organizations, an unknown email', async () => {
    const cases: [string[], RegExp][] = [
      [[], /^--org or --email is required\n/],
      [['--org', randomUUID()], /^Error: Organization not found\n$/],
      [['--org', 'not-a-name'], /^Error: No organization has the id or name "not-a-name"; npm run cli -- org:list lists them\n$/],
      [['--email', 'ops@shared.test'], /^Error: ops@shared.test is a user of several organizations; add --org <id>\n$/],
      [['--email', 'nobody@shared.test'], /^Error: A user with that email not found\n$/],
      [['--org', acme.organizationId, '--email', 'nobody@shared.test'], /^Error: A user with that email not found\n$/],
      [['--email', 'not-an-email'], /^--email must be an email address\n/],
    ];
    for (const [args, message] of cases) {
      const result = await cli('keys:create', ...args);
      expect([args, result.code, result.stdout]).toEqual([args, 1, '']);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('org:list prints one JSON line per organization, oldest first, with its user count', async () => {
    const listed = await cli('org:list');
    expect(listed.code).toBe(0);
    const rows = json(listed);
    expect(rows.map((row) => [row.id, row.name, row.users])).toEqual([
      [acme.organizationId, 'Acme', 1],
      [beta.organizationId, 'Beta', 1],
    ]);
    for (const row of rows) expect(new Date(row.createdAt as string).toISOString()).toBe(row.createdAt);
  });
});
