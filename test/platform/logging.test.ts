import { CreateApiKeyDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let app: TestApp;
const lines: string[] = [];

beforeAll(async () => {
  app = await startTestApp({ logLevel: 'trace' }, { write: (line: string) => void lines.push(line) });
});
afterAll(() => app.close());

it('logs every request with its id but never a key, a token or a secret', async () => {
  const org = await app.organization('Logged');
  const { body: created } = await org.rest.post('/api/auth/api-keys', { name: 'logged', prefix: 'log_' });
  const { body: token } = await org.rest.post('/api/auth/token');
  await app.rest({ authorization: `Bearer ${token.accessToken}` }).get('/api/users/me');
  const { createApiKey } = await org.graphql.ok(CreateApiKeyDocument, { input: { name: 'gql', prefix: 'lg_' } });
  await app.rest({ 'x-api-key': 'wrong_key_value_1234567890' }).get('/api/users/me');

  const log = lines.join('');
  expect(log).toContain('"requestId"');
  expect(log).toContain('/api/users/me');
  expect(log).toContain('"x-api-key":"[redacted]"');
  for (const secret of [org.apiKey, created.secret, token.accessToken, createApiKey.secret, 'wrong_key_value_1234567890']) {
    expect(log).not.toContain(secret);
  }
});
