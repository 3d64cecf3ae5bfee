import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { TEST_DATABASE_URL } from '../helpers/database.js';

// The operator's grant, as an operator runs it: the built CLI (pretest builds it) on its own database.
const ROOT = new URL('../../', import.meta.url).pathname;

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/src/cli.js', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

jest.setTimeout(120_000);

let env: Record<string, string>;
let dataDir: string;
let databaseName: string | undefined;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-credits-cli-'));
  env = { DATA_DIR: dataDir, JWT_SECRET: '' };
  if (TEST_DATABASE_URL) {
    databaseName = `gateway_credits_${randomUUID().replaceAll('-', '')}`;
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`create database ${databaseName}`);
    await admin.end();
    const url = new URL(TEST_DATABASE_URL);
    url.pathname = `/${databaseName}`;
    env.DATABASE_URL = url.toString();
  }
});
afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  if (TEST_DATABASE_URL && databaseName) {
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`drop database if exists ${databaseName} with (force)`);
    await admin.end();
  }
});

it('credits:add grants credits to an organization and prints the balance and the ledger entry', async () => {
  const created = await cli(['org:create', '--name', 'Acme', '--email', 'admin@acme.test'], env);
  expect(created.code).toBe(0);
  const { organizationId } = JSON.parse(created.stdout) as { organizationId: string };

  const first = await cli(['credits:add', '--org', organizationId, '--amount', '500', '--reason', 'invoice 7'], env);
  expect([first.code, first.stderr]).toEqual([0, '']);
  expect(JSON.parse(first.stdout)).toEqual({ organizationId, amount: 500, creditBalance: 500, ledgerEntryId: expect.any(String) });
  const second = await cli(['credits:add', '--org', organizationId, '--amount', '25'], env);
  expect(JSON.parse(second.stdout)).toMatchObject({ amount: 25, creditBalance: 525 });
});

it.each([
  [['--org', randomUUID(), '--amount', '5'], /no organization with the id/],
  [['--org', randomUUID(), '--amount', '0'], /--amount is required \(a whole number/],
  [['--org', randomUUID(), '--amount', '1.5'], /--amount is required/],
  [['--amount', '5'], /--org is required/],
])('credits:add %j fails with one clear message', async (args, message) => {
  const result = await cli(['credits:add', ...args], env);
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(message);
  expect(result.stdout).toBe('');
});
