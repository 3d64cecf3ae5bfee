import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import twilio from 'twilio';
import { seal } from '../../src/platform/credentials.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

// The carrier webhooks (/telephony) as a stranger reaches them: no key, no signature, any request target.

const ANONYMOUS_PER_MINUTE = 60;
const AUTH_TOKEN = 'f'.repeat(28) + 'abcd';

let app: TestApp;
let connectionId: string;
const logs: string[] = [];
let forwardedFor = 0;
/** A client address of its own for each test (X-Forwarded-For, believed from loopback here), so their counters do not mix. */
const nextClient = () => `203.0.113.${++forwardedFor}`;

beforeAll(async () => {
  app = await startTestApp(
    {
      logLevel: 'info',
      trustProxy: 'loopback',
      rateLimit: { perMinute: 0, anonymousPerMinute: ANONYMOUS_PER_MINUTE, organizationPerMinute: 0 },
      telephony: { twilioApiBaseUrl: 'https://api.twilio.com', credentialsKey: randomBytes(32), publicUrl: undefined },
    },
    { write: (line: string) => void logs.push(line) },
  );
  app.config.telephony.publicUrl = app.baseUrl;
  const { organizationId } = await app.organization('Acme');
  connectionId = randomUUID();
  await app.sql(
    `insert into carrier_connections (id, created_at, updated_at, organization_id, name, carrier, account_sid, auth_token_encrypted, auth_token_last4, calls_per_second)
     values (?, now(), now(), ?, 'Twilio', 'twilio', ?, ?, 'abcd', 1)`,
    [connectionId, organizationId, `AC${'a'.repeat(32)}`, seal(AUTH_TOKEN, app.config.telephony.credentialsKey!)],
  );
});
afterAll(() => app?.close());

const statusPath = () => `/telephony/twilio/${connectionId}/status?callId=${randomUUID()}`;
const fields = { CallSid: `CA${'1'.repeat(32)}`, CallStatus: 'completed', AccountSid: `AC${'a'.repeat(32)}` };

function post(path: string, body: string | URLSearchParams, headers: Record<string, string> = {}) {
  return fetch(`${app.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
}

/** One raw HTTP/1.1 exchange over node:net: the request target is sent exactly as given. */
function rawRequest(text: string): Promise<string> {
  const { port } = new URL(app.baseUrl);
  return new Promise((resolve, reject) => {
    // Written, not ended: a client's half-close would let the server drop the request before it answers. `Connection: close` ends it.
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

it('a form of more than 200 fields answers 400, not 500, and the body never reaches the log', async () => {
  const marker = `marker${randomUUID().replaceAll('-', '')}`;
  const form = new URLSearchParams();
  for (let i = 0; i < 201; i++) form.append(`Field${i}`, marker);
  const before = logs.length;
  const res = await post(statusPath(), form, { 'x-forwarded-for': nextClient() });
  expect(res.status).toBe(400);
  expect(await res.json()).toMatchObject({ status: 400, code: 'BAD_USER_INPUT', detail: 'The form has more fields than allowed' });
  const written = logs.slice(before).join('\n');
  expect(written).not.toContain(marker);
  expect(written).not.toMatch(/"level":50/);
});

it('a body over 64 KB answers 413 and a malformed encoding 400; neither is logged with its body', async () => {
  const marker = `marker${randomUUID().replaceAll('-', '')}`;
  const before = logs.length;
  const large = await post(statusPath(), `CallSid=${marker}&Pad=${'x'.repeat(70_000)}`, { 'x-forwarded-for': nextClient() });
  expect(large.status).toBe(413);
  const charset = await post(statusPath(), `CallSid=${marker}`, { 'content-type': 'application/x-www-form-urlencoded; charset=x-unknown', 'x-forwarded-for': nextClient() });
  expect(charset.status).toBe(400);
  expect(logs.slice(before).join('\n')).not.toContain(marker);
});

it('an absolute-form request target answers 403 (not signed), never 500, even with a signature', async () => {
  const path = statusPath();
  const body = new URLSearchParams(fields).toString();
  const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${app.baseUrl}${path}`, fields);
  const before = logs.length;
  for (const target of [`http://evil.test${path}`, `http://evil.test:99999${path}`, `${app.baseUrl}${path}`]) {
    const answer = await rawRequest(
      `POST ${target} HTTP/1.1\r\nHost: evil.test\r\nX-Forwarded-For: ${nextClient()}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        `X-Twilio-Signature: ${signature}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect([target, answer.split('\r\n')[0]]).toEqual([target, 'HTTP/1.1 403 Forbidden']);
  }
  expect(logs.slice(before).join('\n')).not.toMatch(/"level":50/);
  // The same request in origin form, as Twilio sends it, is signed.
  const signed = await post(path, body, { 'x-twilio-signature': signature, 'x-forwarded-for': nextClient() });
  expect(signed.status).toBe(200);
});

it(`past ${ANONYMOUS_PER_MINUTE} refused posts from one address in a minute: 429 with Retry-After; signed posts are not counted`, async () => {
  const client = nextClient();
  // Signed requests from the same address first, more than the limit: each answered 200, none counted.
  for (let i = 0; i < ANONYMOUS_PER_MINUTE + 10; i++) {
    const path = statusPath();
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${app.baseUrl}${path}`, fields);
    expect((await post(path, new URLSearchParams(fields), { 'x-twilio-signature': signature, 'x-forwarded-for': client })).status).toBe(200);
  }
  const statuses: number[] = [];
  for (let i = 0; i < ANONYMOUS_PER_MINUTE + 1; i++) {
    statuses.push((await post(statusPath(), new URLSearchParams(fields), { 'x-forwarded-for': client })).status);
  }
  expect(statuses.slice(0, ANONYMOUS_PER_MINUTE)).toEqual(new Array(ANONYMOUS_PER_MINUTE).fill(403));
  expect(statuses[ANONYMOUS_PER_MINUTE]).toBe(429);
  const refused = await post(`/telephony/twilio/${connectionId}/answer`, new URLSearchParams(fields), { 'x-forwarded-for': client });
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await refused.json()).toMatchObject({ code: 'RATE_LIMITED' });
  // The counter is the doors' anonymous one: the same address without credentials is refused on /api too.
  expect((await fetch(`${app.baseUrl}/api/users/me`, { headers: { 'x-forwarded-for': client } })).status).toBe(429);
  // Another address is not.
  expect((await post(statusPath(), new URLSearchParams(fields), { 'x-forwarded-for': nextClient() })).status).toBe(403);
});

it(`the media streams' upgrade: past ${ANONYMOUS_PER_MINUTE} refused upgrades from one address in a minute it answers 429 before checking anything`, async () => {
  const client = nextClient();
  const mediaPath = () => `/telephony/twilio/${connectionId}/media/${randomUUID()}/not-a-nonce`;
  /** One upgrade over raw HTTP: the status line of the answer. */
  const upgrade = async (path: string, from: string) => {
    const answer = await rawRequest(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nX-Twilio-Signature: forged\r\nX-Forwarded-For: ${from}\r\n\r\n`,
    );
    return answer.split('\r\n')[0];
  };
  const statuses: (string | undefined)[] = [];
  for (let i = 0; i < ANONYMOUS_PER_MINUTE + 1; i++) statuses.push(await upgrade(mediaPath(), client));
  expect(statuses.slice(0, ANONYMOUS_PER_MINUTE)).toEqual(new Array(ANONYMOUS_PER_MINUTE).fill('HTTP/1.1 403 Forbidden'));
  expect(statuses[ANONYMOUS_PER_MINUTE]).toBe('HTTP/1.1 429 Too Many Requests');
  // The same count as the doors' anonymous limit, and another address has its own.
  expect((await fetch(`${app.baseUrl}/api/users/me`, { headers: { 'x-forwarded-for': client } })).status).toBe(429);
  expect(await upgrade(mediaPath(), nextClient())).toBe('HTTP/1.1 403 Forbidden');
});

it('a connection whose token does not open with CREDENTIALS_KEY: its signed webhooks answer 503 with Retry-After, not 500', async () => {
  const [{ organization_id: organizationId }] = await app.sql<{ organization_id: string }>('select organization_id from carrier_connections where id = ?', [connectionId]);
  const foreign = randomUUID();
  await app.sql(
    `insert into carrier_connections (id, created_at, updated_at, organization_id, name, carrier, account_sid, auth_token_encrypted, auth_token_last4, calls_per_second)
     values (?, now(), now(), ?, 'Other key', 'twilio', ?, ?, 'abcd', 1)`,
    [foreign, organizationId, `AC${'b'.repeat(32)}`, seal(AUTH_TOKEN, randomBytes(32))],
  );
  const before = logs.length;
  for (const route of ['status', 'answer', 'gather']) {
    const path = `/telephony/twilio/${foreign}/${route}?callId=${randomUUID()}`;
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${app.baseUrl}${path}`, fields);
    const res = await post(path, new URLSearchParams(fields), { 'x-twilio-signature': signature, 'x-forwarded-for': nextClient() });
    expect([route, res.status]).toEqual([route, 503]);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toMatchObject({ code: 'UNAVAILABLE' });
  }
  const lines = logs.slice(before).map((line) => JSON.parse(line));
  expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  expect(lines.filter((line) => line.level === 40 && line.cause?.name === 'CredentialsError')).toHaveLength(3);
});
