import { jest } from '@jest/globals';
import { CLI, operatorEnvironment, runScript, type OperatorEnvironment, startServer as startServerProcess } from '../support/entry-points.js';

// The server as an operator runs it, killed (SIGKILL) while the simulated carrier has calls in
// flight, then started again: every call ends in one final state, every contact is counted once.
jest.setTimeout(120_000);

const startServer = (env: Record<string, string>) => startServerProcess(env);

let operator: OperatorEnvironment;
beforeEach(async () => (operator = await operatorEnvironment('restart')));
afterEach(() => operator.drop());

it('a server killed with calls in flight: after the restart every call has one final state and every contact is counted once', async () => {
  const created = await runScript(CLI, ['org:create', '--name', 'Acme', '--email', 'ops@acme.test'], operator.env);
  expect(created.code).toBe(0);
  const { organizationId, apiKey } = JSON.parse(created.stdout.trim()) as { organizationId: string; apiKey: string };
  expect((await runScript(CLI, ['credits:add', '--org', organizationId, '--amount', '20', '--reason', 'restart test'], operator.env)).code).toBe(0);

  const api = (url: string) => async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}/api${path}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };

  // Calls that last 5 s, leases of 1 s: the kill lands mid-call.
  const slow = { ...operator.env, DIALER_SPEED_MS: '5000', RUNNER_INTERVAL_MS: '50', RUNNER_LEASE_MS: '1000', DIALER_SEED: 'restart' };
  let server = await startServer(slow);
  let call = api(server.url);
  await call('POST', '/contacts/import', {
    contacts: [1, 2, 3, 4].map((i) => ({ name: `Person ${i}`, phone: `+1202555010${i}` })),
  });
  const contactIds = (await call('GET', '/contacts?limit=10')).data.map((contact: { id: string }) => contact.id);
  const audience = await call('POST', '/audience', { name: 'All' });
  await call('POST', `/audience/${audience.id}/members`, { contactIds });
  const flow = await call('POST', '/call-flows', {
    name: 'Hello',
    nodes: [
      { id: 'start', type: 'start' },
      { id: 'hello', type: 'say', label: 'Hello' },
      { id: 'end', type: 'end' },
    ],
    edges: [
      { from: 'start', to: 'hello', condition: 'answered' },
      { from: 'hello', to: 'end' },
    ],
  });
  const program = await call('POST', '/programs', {
    name: 'Restart',
    kind: 'campaign',
    flowId: flow.id,
    audienceId: audience.id,
    maxConcurrentCalls: 4,
    retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 },
  });
  await call('POST', `/programs/${program.id}/activate`);
  const execution = await call('POST', `/programs/${program.id}/executions`);
  await call('POST', `/executions/${execution.id}/start`);

  const live = ['queued', 'ringing', 'in_progress'];
  for (let i = 0; ; i++) {
    const calls = (await call('GET', `/calls?executionId=${execution.id}&limit=100`)).data as { status: string }[];
    if (calls.length === 4 && calls.every((row) => row.status === 'ringing')) break;
    if (i > 200) throw new Error(`calls never all rang: ${JSON.stringify(calls)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  server.child.kill('SIGKILL');
  await server.exited;

  server = await startServer({ ...slow, DIALER_SPEED_MS: '20' });
  call = api(server.url);
  try {
    let status = '';
    for (let i = 0; i < 400 && status !== 'completed'; i++) {
      status = (await call('GET', `/executions/${execution.id}`)).status;
      if (status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const done = await call('GET', `/executions/${execution.id}`);
    expect(done).toMatchObject({ status: 'completed', totalContacts: 4, contactsPending: 0, contactsInProgress: 0, creditsSpent: 4 });
    expect(done.contactsCompleted + done.contactsFailed).toBe(4);

    const calls = (await call('GET', `/calls?executionId=${execution.id}&limit=100`)).data as {
      contactId: string;
      status: string;
      errorText: string | null;
      creditsCharged: number;
      attempt: number;
    }[];
    expect(calls.filter((row) => live.includes(row.status))).toEqual([]);
    // The calls the killed process was simulating are gone with it: failed, not charged; each contact was called again once.
    const lost = calls.filter((row) => row.errorText === 'The carrier has no record of this call');
    expect(lost).toHaveLength(4);
    expect(lost.every((row) => row.status === 'failed' && row.creditsCharged === 0)).toBe(true);
    const counted = calls.filter((row) => row.creditsCharged === 1);
    expect(counted.map((row) => row.contactId).sort()).toEqual([...contactIds].sort());
    expect(counted.every((row) => row.attempt === 1)).toBe(true);
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
  }
});
