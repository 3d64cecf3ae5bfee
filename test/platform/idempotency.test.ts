import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { activeCampaign } from '../programs/fixtures.js';

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  other = await app.organization('Other');
});
afterAll(() => app.close());

const agentBody = (name: string) => ({ name, instructions: 'You help customers.', modelConfig: { model: 'builtin/echo' } });
const withKey = (org: TestOrganization, key: string) => org.rest.with({ 'idempotency-key': key });

async function agentsNamed(organizationId: string, name: string): Promise<number> {
  const [row] = await app.sql<{ count: number }>('select count(*)::int as count from agents where organization_id = ? and name = ?', [organizationId, name]);
  return row!.count;
}

async function idempotencyRows(organizationId: string): Promise<Record<string, unknown>[]> {
  return app.sql('select * from idempotency_keys where organization_id = ?', [organizationId]);
}

describe('Idempotency-Key on POST /api/agents', () => {
  it('replays the first answer (same status, same id) without creating a second agent', async () => {
    const key = randomUUID();
    const first = await withKey(acme, key).post('/api/agents', agentBody('Replayed'));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // The same body with its keys in another order is the same request.
    const { modelConfig, instructions, name } = agentBody('Replayed');
    const again = await withKey(acme, key).post('/api/agents', { modelConfig, instructions, name });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await agentsNamed(acme.organizationId, 'Replayed')).toBe(1);
  });

  it('answers 409 when the key comes back with a different body', async () => {
    const key = randomUUID();
    expect((await withKey(acme, key).post('/api/agents', agentBody('Body A'))).status).toBe(201);
    const clash = await withKey(acme, key).post('/api/agents', agentBody('Body B'));
    expect(clash.status).toBe(409);
    expect(clash.body).toMatchObject({ code: 'CONFLICT', detail: 'Idempotency-Key was used with a different request body' });
    expect(await agentsNamed(acme.organizationId, 'Body B')).toBe(0);
  });

  it('without the header, two identical requests create two agents', async () => {
    expect((await acme.rest.post('/api/agents', agentBody('No key'))).status).toBe(201);
    expect((await acme.rest.post('/api/agents', agentBody('No key'))).status).toBe(201);
    expect(await agentsNamed(acme.organizationId, 'No key')).toBe(2);
  });

  it.each([['too long', 'k'.repeat(256)], ['not printable ASCII', 'clé-été'], ['empty', '']])('rejects a key that is %s with 400 naming the header', async (_, key) => {
    const bad = await fetch(`${app.baseUrl}/api/agents`, {
      method: 'POST',
      headers: { 'x-api-key': acme.apiKey, 'content-type': 'application/json', 'idempotency-key': Buffer.from(key, 'utf8').toString('latin1') },
      body: JSON.stringify(agentBody('Bad key')),
    });
    expect(bad.status).toBe(400);
    const problem = (await bad.json()) as { code: string; errors: { field: string }[] };
    expect(problem.code).toBe('BAD_USER_INPUT');
    expect(problem.errors.map((error) => error.field)).toEqual(['Idempotency-Key']);
    expect(await agentsNamed(acme.organizationId, 'Bad key')).toBe(0);
  });

  it('accepts a key of exactly 255 printable characters', async () => {
    const key = `${randomUUID()} ~!`.padEnd(255, 'x');
    expect((await withKey(acme, key).post('/api/agents', agentBody('Long key'))).status).toBe(201);
    expect((await withKey(acme, key).post('/api/agents', agentBody('Long key'))).headers.get('idempotent-replayed')).toBe('true');
  });

  it('keys belong to one organization: another organization using the same key creates its own agent', async () => {
    const key = randomUUID();
    const mine = await withKey(acme, key).post('/api/agents', agentBody('Shared key'));
    const theirs = await withKey(other, key).post('/api/agents', agentBody('Shared key'));
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(await agentsNamed(other.organizationId, 'Shared key')).toBe(1);
  });

  it('does not cache a failure: a 400 or a 404 from the handler leaves no record, and the fixed retry creates', async () => {
    const key = randomUUID();
    const invalid = await withKey(acme, key).post('/api/agents', { ...agentBody('Retried'), modelConfig: { model: 'nope' } });
    expect(invalid.status).toBe(400);
    const missingBase = await withKey(acme, key).post('/api/agents', { ...agentBody('Retried'), knowledgeBaseConfig: { knowledgeBaseId: randomUUID() } });
    expect(missingBase.status).toBe(404);
    expect((await idempotencyRows(acme.organizationId)).filter((row) => row.key === key)).toEqual([]);
    const fixed = await withKey(acme, key).post('/api/agents', agentBody('Retried'));
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
    expect(await agentsNamed(acme.organizationId, 'Retried')).toBe(1);
  });

  it('concurrent requests with one key: exactly one creates, the others get 409 or the replay', async () => {
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 6 }, () => withKey(acme, key).post('/api/agents', agentBody('Raced'))));
    const created = answers.filter((res) => res.status === 201 && res.headers.get('idempotent-replayed') === null);
    expect(created).toHaveLength(1);
    for (const res of answers) {
      if (res.status === 201) expect(res.body.id).toBe(created[0]!.body.id);
      else expect(res.status).toBe(409);
    }
    expect(await agentsNamed(acme.organizationId, 'Raced')).toBe(1);
  });

  it('an expired record counts as absent: the key creates again and the old row is gone', async () => {
    const key = randomUUID();
    const first = await withKey(acme, key).post('/api/agents', agentBody('Expired'));
    await app.sql(`update idempotency_keys set expires_at = now() - interval '1 minute' where key = ?`, [key]);
    const second = await withKey(acme, key).post('/api/agents', agentBody('Expired'));
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.id).not.toBe(first.body.id);
    const rows = (await idempotencyRows(acme.organizationId)).filter((row) => row.key === key);
    expect(rows).toHaveLength(1);
    expect(new Date(rows[0]!.expires_at as string).getTime() - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
  });
});

describe('Idempotency-Key on the other creates', () => {
  it('POST /api/auth/api-keys: a replay answers 409 and the secret is stored nowhere', async () => {
    const key = randomUUID();
    const created = await withKey(acme, key).post('/api/auth/api-keys', { name: 'Idempotent key', prefix: 'idem' });
    expect(created.status).toBe(201);
    const secret = created.body.secret as string;
    expect(secret.length).toBeGreaterThan(32);
    const replay = await withKey(acme, key).post('/api/auth/api-keys', { name: 'Idempotent key', prefix: 'idem' });
    expect(replay.status).toBe(409);
    expect(replay.body.detail).toBe('the original response contained a secret shown only once; create a new key');
    expect(JSON.stringify(replay.body)).not.toContain(secret);
    const rows = await app.sql('select * from idempotency_keys');
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(JSON.stringify(rows)).not.toContain(secret.slice(-32));
    const [stored] = rows.filter((row) => row.key === key);
    expect(stored).toMatchObject({ status: 'completed', secret_omitted: true, response_status: 201 });
    expect(stored!.response_body).toMatchObject({ id: created.body.id, name: 'Idempotent key' });
    const [count] = await app.sql<{ count: number }>(`select count(*)::int as count from api_keys where name = 'Idempotent key'`);
    expect(count!.count).toBe(1);
  });

  it('POST /api/agents/{agentId}/conversations replays per agent path', async () => {
    const agentA = (await acme.rest.post('/api/agents', agentBody('Talker A'))).body.id;
    const agentB = (await acme.rest.post('/api/agents', agentBody('Talker B'))).body.id;
    const key = randomUUID();
    const first = await withKey(acme, key).post(`/api/agents/${agentA}/conversations`, { title: 'Hello' });
    const again = await withKey(acme, key).post(`/api/agents/${agentA}/conversations`, { title: 'Hello' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    // The same key on another path is another request.
    const otherAgent = await withKey(acme, key).post(`/api/agents/${agentB}/conversations`, { title: 'Hello' });
    expect(otherAgent.headers.get('idempotent-replayed')).toBeNull();
    const [count] = await app.sql<{ count: number }>('select count(*)::int as count from conversations where agent_id = ?', [agentA]);
    expect(count!.count).toBe(1);
  });

  it('POST /api/programs/{id}/executions replays the execution, with no body sent', async () => {
    const campaign = await activeCampaign(acme, 2);
    const key = randomUUID();
    const first = await withKey(acme, key).post(`/api/programs/${campaign.programId}/executions`);
    const again = await withKey(acme, key).post(`/api/programs/${campaign.programId}/executions`);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const [count] = await app.sql<{ count: number }>('select count(*)::int as count from executions where program_id = ?', [campaign.programId]);
    expect(count!.count).toBe(1);
  });
});
