import { randomBytes, randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
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
  const charset = await post(statusPath(), `CallSid=${marker}`, {
    'content-type': 'application/x-www-form-urlencoded; charset=x-unknown',
    'x-forwarded-for': nextClient(),
  });
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
  const [{ organization_id: organizationId }] = await app.sql<{ organization_id: string }>('select organization_id from carrier_connections where id = ?', [
    connectionId,
  ]);
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

it('a signed report whose call or recording status is named like what every object inherits is a status it does not know, ignored', async () => {
  const cases: [route: string, fields: Record<string, string>, logged: string][] = [
    ['status', { ...fields, CallStatus: 'constructor' }, 'carrier status callback without a status we know; ignored'],
    ['status', { ...fields, CallStatus: 'toString' }, 'carrier status callback without a status we know; ignored'],
    [
      'recording',
      { ...fields, RecordingSid: `RE${'1'.repeat(32)}`, RecordingStatus: '__proto__' },
      'recording status callback without a status we know; ignored',
    ],
    [
      'recording',
      { ...fields, RecordingSid: `RE${'1'.repeat(32)}`, RecordingStatus: 'hasOwnProperty' },
      'recording status callback without a status we know; ignored',
    ],
  ];
  for (const [route, form, logged] of cases) {
    const before = logs.length;
    const path = `/telephony/twilio/${connectionId}/${route}?callId=${randomUUID()}`;
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${app.baseUrl}${path}`, form);
    const res = await post(path, new URLSearchParams(form), { 'x-twilio-signature': signature, 'x-forwarded-for': nextClient() });
    const messages = logs.slice(before).map((line) => JSON.parse(line) as { msg: string; level: number });
    expect([route, form, res.status, messages.filter((line) => line.level >= 40).map((line) => line.msg)]).toEqual([route, form, 200, [logged]]);
  }
});

it(`a burst of ${ANONYMOUS_PER_MINUTE * 2} forged posts from one address, all read before any is answered: ${ANONYMOUS_PER_MINUTE} are checked, the rest answered 429 at once`, async () => {
  const client = nextClient();
  const body = new URLSearchParams(fields).toString();
  const { port } = new URL(app.baseUrl);
  // Each post sends its head now and its body only once the server has seen every head: without a
  // place held while a post is decided, all of them would pass the count before the first is refused.
  let seen = 0;
  const onStart = ({ request }: { request: { url?: string } }) => void (request.url?.startsWith('/telephony/') && seen++);
  subscribe('http.server.request.start', onStart as never);
  try {
    const posts = Array.from({ length: ANONYMOUS_PER_MINUTE * 2 }, () => {
      let answer = '';
      const socket = connect(Number(port), '127.0.0.1');
      const answered = new Promise<string>((resolve) => {
        socket.on('data', (chunk) => (answer += chunk));
        socket.on('end', () => resolve(answer.split('\r\n')[0]!));
        socket.on('error', () => resolve(answer.split('\r\n')[0]!));
      });
      socket.write(
        `POST ${statusPath()} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: ${client}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
          `X-Twilio-Signature: forged\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
      );
      return { socket, answered };
    });
    while (seen < posts.length) await new Promise((resolve) => setImmediate(resolve));
    for (const post of posts) post.socket.write(body);
    const statuses = await Promise.all(posts.map((post) => post.answered));
    const counts = statuses.reduce<Record<string, number>>((all, status) => ({ ...all, [status]: (all[status] ?? 0) + 1 }), {});
    expect(counts).toEqual({ 'HTTP/1.1 403 Forbidden': ANONYMOUS_PER_MINUTE, 'HTTP/1.1 429 Too Many Requests': ANONYMOUS_PER_MINUTE });
  } finally {
    unsubscribe('http.server.request.start', onStart as never);
  }
});

it(`a burst of ${ANONYMOUS_PER_MINUTE * 2} forged media stream upgrades from one address, all arrived before any is decided: ${ANONYMOUS_PER_MINUTE} are checked, the rest answered 429`, async () => {
  const client = nextClient();
  const total = ANONYMOUS_PER_MINUTE * 2;
  // The connection's look-up, which every upgrade's check starts with, waits until each upgrade of the
  // burst is either waiting in it or answered: none is decided before all have arrived.
  const carrierConnections = app.gateway.services.carrierConnections;
  const lookUp = carrierConnections.accountById.bind(carrierConnections);
  let waiting = 0;
  let answered = 0;
  let release!: () => void;
  const arrived = new Promise<void>((resolve) => (release = resolve));
  const check = () => waiting + answered === total && release();
  carrierConnections.accountById = async (id: string) => {
    waiting++;
    check();
    await arrived;
    return lookUp(id);
  };
  try {
    const upgrades = await Promise.all(
      Array.from({ length: total }, () =>
        rawRequest(
          `GET /telephony/twilio/${connectionId}/media/${randomUUID()}/not-a-nonce HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
            `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nX-Twilio-Signature: forged\r\nX-Forwarded-For: ${client}\r\n\r\n`,
        ).then((answer) => {
          answered++;
          check();
          return answer.split('\r\n')[0]!;
        }),
      ),
    );
    const counts = upgrades.reduce<Record<string, number>>((all, status) => ({ ...all, [status]: (all[status] ?? 0) + 1 }), {});
    expect(counts).toEqual({ 'HTTP/1.1 403 Forbidden': ANONYMOUS_PER_MINUTE, 'HTTP/1.1 429 Too Many Requests': ANONYMOUS_PER_MINUTE });
  } finally {
    carrierConnections.accountById = lookUp;
  }
});

describe('every signing scheme Twilio documents', () => {
  // Twilio's webhook security page and twilio-node 6.3.1: the auth token with HMAC-SHA1 by default; a
  // Webhooks Rule's SharedKey, named with its algorithm in X-Twilio-Webhooks-Signature-Settings; and
  // a JSON body signed through its SHA-256 in the URL's bodySHA256.
  const SHARED_KEY = 'sharedkey-secret-0123456789abcdef';
  let keyed: string;

  beforeAll(async () => {
    const [{ organization_id: organizationId }] = await app.sql<{ organization_id: string }>(`select organization_id from carrier_connections where id = ?`, [
      connectionId,
    ]);
    keyed = randomUUID();
    await app.sql(
      `insert into carrier_connections (id, created_at, updated_at, organization_id, name, carrier, account_sid, auth_token_encrypted, auth_token_last4, calls_per_second, webhook_key_encrypted, webhook_key_last4)
       values (?, now(), now(), ?, 'Twilio keyed', 'twilio', ?, ?, 'abcd', 1, ?, 'cdef')`,
      [
        keyed,
        organizationId,
        `AC${'e'.repeat(32)}`,
        seal(AUTH_TOKEN, app.config.telephony.credentialsKey!),
        seal(SHARED_KEY, app.config.telephony.credentialsKey!),
      ],
    );
  });

  const keyedPath = () => `/telephony/twilio/${keyed}/status?callId=${randomUUID()}`;
  const settings = (algorithm: string) => `key=webhooks_sharedkey_${'c'.repeat(32)},algorithm=${algorithm}`;

  it.each(['HMAC_SHA256', 'HMAC_SHA1'])(
    'accepts a form signed with the connection’s SharedKey by %s, and refuses the same signed with the auth token',
    async (algorithm) => {
      const path = keyedPath();
      const url = `${app.baseUrl}${path}`;
      const signed = twilio.getExpectedTwilioSignature(SHARED_KEY, url, fields, algorithm);
      expect(
        (
          await post(path, new URLSearchParams(fields), {
            'x-twilio-signature': signed,
            'x-twilio-webhooks-signature-settings': settings(algorithm),
            'x-forwarded-for': nextClient(),
          })
        ).status,
      ).toBe(200);
      const byToken = twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, fields, algorithm);
      expect(
        (
          await post(path, new URLSearchParams(fields), {
            'x-twilio-signature': byToken,
            'x-twilio-webhooks-signature-settings': settings(algorithm),
            'x-forwarded-for': nextClient(),
          })
        ).status,
      ).toBe(403);
      // Without the settings header, the SharedKey's signature is not the auth token's: refused.
      expect((await post(path, new URLSearchParams(fields), { 'x-twilio-signature': signed, 'x-forwarded-for': nextClient() })).status).toBe(403);
    },
  );

  it('refuses a SharedKey signature on a connection that holds no key, and an algorithm Twilio does not name', async () => {
    const path = statusPath();
    const url = `${app.baseUrl}${path}`;
    const signed = twilio.getExpectedTwilioSignature(SHARED_KEY, url, fields, 'HMAC_SHA256');
    expect(
      (
        await post(path, new URLSearchParams(fields), {
          'x-twilio-signature': signed,
          'x-twilio-webhooks-signature-settings': settings('HMAC_SHA256'),
          'x-forwarded-for': nextClient(),
        })
      ).status,
    ).toBe(403);
    const other = keyedPath();
    const md5 = twilio.getExpectedTwilioSignature(SHARED_KEY, `${app.baseUrl}${other}`, fields, 'HMAC_SHA256');
    expect(
      (
        await post(other, new URLSearchParams(fields), {
          'x-twilio-signature': md5,
          'x-twilio-webhooks-signature-settings': settings('HMAC_MD5'),
          'x-forwarded-for': nextClient(),
        })
      ).status,
    ).toBe(403);
  });

  it('accepts a JSON body signed through bodySHA256, and refuses it once the body changes', async () => {
    const body = JSON.stringify({ CallSid: fields.CallSid, CallStatus: 'completed' });
    const path = `${statusPath()}&bodySHA256=${encodeURIComponent(twilio.getExpectedBodyHash(body))}`;
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${app.baseUrl}${path}`, {});
    const json = { 'content-type': 'application/json', 'x-twilio-signature': signature };
    expect((await post(path, body, { ...json, 'x-forwarded-for': nextClient() })).status).toBe(200);
    expect((await post(path, body.replace('completed', 'busy'), { ...json, 'x-forwarded-for': nextClient() })).status).toBe(403);
  });
});
