import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { CLI, operatorEnvironment, runScript, type OperatorEnvironment } from '../support/entry-points.js';

// The operator's grant, as an operator runs it: the built CLI (pretest builds it) on its own database.
const cli = (args: string[], env: Record<string, string>) => runScript(CLI, args, env);

jest.setTimeout(120_000);

let operator: OperatorEnvironment;
let env: Record<string, string>;

beforeAll(async () => {
  operator = await operatorEnvironment('credits-cli');
  env = operator.env;
});
afterAll(() => operator.drop());

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
  [['--org', randomUUID(), '--amount', '5'], /^Error: No organization with the id [0-9a-f-]{36}; npm run cli -- org:list lists them\n$/],
  [['--org', randomUUID(), '--amount', '0'], /--amount is required \(a whole number/],
  [['--org', randomUUID(), '--amount', '1.5'], /--amount is required/],
  [['--amount', '5'], /--org is required/],
])('credits:add %j fails with one clear message', async (args, message) => {
  const result = await cli(['credits:add', ...args], env);
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(message);
  expect(result.stdout).toBe('');
});
