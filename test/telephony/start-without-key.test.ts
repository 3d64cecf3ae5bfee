import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { openDatabase } from '../../src/db/orm.js';
import { seal } from '../../src/platform/credentials.js';
import { CLI, MAIN, operatorEnvironment, runScript, type OperatorEnvironment } from '../support/entry-points.js';

// The built server as an operator runs it: stored carrier connections without CREDENTIALS_KEY stop the start.

jest.setTimeout(120_000);

let operator: OperatorEnvironment;
beforeAll(async () => {
  operator = await operatorEnvironment('creds');
});
afterAll(() => operator?.drop());

it('refuses to start in one line naming CREDENTIALS_KEY when carrier connections are stored, without the key or with another; starts past that check with the key', async () => {
  const created = await runScript(CLI, ['org:create', '--name', 'Acme', '--email', 'admin@acme.test'], operator.env);
  expect(created.code).toBe(0);
  const { organizationId } = JSON.parse(created.stdout.trim()) as { organizationId: string };

  // A port in use stops a start only after the check: reaching it proves the check let the start through.
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const busyPort = String((blocker.address() as AddressInfo).port);
  const pastTheCheck = (env: Record<string, string>) => runScript(MAIN, [], { ...operator.env, HOST: '127.0.0.1', PORT: busyPort, ...env });

  // Without connections, no key is needed.
  const noConnections = await pastTheCheck({ CREDENTIALS_KEY: '' });
  expect(noConnections.stderr).toMatch(/already in use/);

  const key = randomBytes(32);
  const database = await openDatabase({ databaseUrl: operator.env.DATABASE_URL, dataDir: operator.dataDir, migrate: false });
  try {
    await database.em
      .fork()
      .getConnection()
      .execute(
        `insert into carrier_connections (id, created_at, updated_at, organization_id, name, carrier, account_sid, auth_token_encrypted, auth_token_last4, calls_per_second)
       values (?, now(), now(), ?, 'Twilio', 'twilio', ?, ?, 'abcd', 1)`,
        [randomUUID(), organizationId, `AC${'a'.repeat(32)}`, seal('0'.repeat(28) + 'abcd', key)],
      );
  } finally {
    await database.close();
  }

  const refused = await pastTheCheck({ CREDENTIALS_KEY: '' });
  expect(refused.code).toBe(1);
  expect(refused.stderr.trim().split('\n')).toHaveLength(1);
  expect(refused.stderr).toMatch(/^Cannot start: CREDENTIALS_KEY is not set, but the database holds 1 carrier connection/);

  // With the key the check passes: the port in use is what stops it.
  const withKey = await pastTheCheck({ CREDENTIALS_KEY: key.toString('base64') });
  expect(withKey.stderr).toMatch(/already in use/);
  expect(withKey.stderr).not.toMatch(/CREDENTIALS_KEY/);

  // Another key (well-formed, 32 bytes) does not open the stored token: refused in one line naming the variable.
  for (const wrong of [randomBytes(32).toString('base64'), randomBytes(32).toString('hex')]) {
    const wrongKey = await pastTheCheck({ CREDENTIALS_KEY: wrong });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrongKey.stderr).toMatch(
      /^Cannot start: CREDENTIALS_KEY does not open the carrier connections’ auth tokens stored in the database: it is not the key they were sealed with/,
    );
  }
  await new Promise((resolve) => blocker.close(resolve));
});
