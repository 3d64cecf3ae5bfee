import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

// What a request names and sends, as the doors read it. A body in a content coding, on every door that
// reads one: a coding it does not take is 415 with Accept-Encoding, a body that does not decode as its
// coding says is 400 BAD_USER_INPUT, counted on the anonymous limit like any refusal, and neither is a
// 500 or a stack in the log. A key the request names (an alias, a fragment) is a key like any other,
// whatever its name.

const ANONYMOUS_PER_MINUTE = 5;

let app: TestApp;
let acme: TestOrganization;
const logs: string[] = [];
let client = 0;
/** A client address of its own (X-Forwarded-For, believed from loopback here), so the tests' counters do not mix. */
const nextClient = () => `198.51.100.${++client}`;

beforeAll(async () => {
  app = await startTestApp(
    { logLevel: 'info', trustProxy: 'loopback', rateLimit: { perMinute: 0, anonymousPerMinute: ANONYMOUS_PER_MINUTE, organizationPerMinute: 0 } },
    { write: (line: string) => void logs.push(line) },
  );
  acme = await app.organization('Acme');
});
afterAll(() => app?.close());

const connectionId = randomUUID();
/** Every route that reads a body: the REST door, the GraphQL door and each carrier webhook. */
const DOORS: { name: string; path: string; type: string; keyed: boolean }[] = [
  { name: 'REST', path: '/api/agents', type: 'application/json', keyed: true },
  { name: 'GraphQL', path: '/graphql', type: 'application/json', keyed: true },
  ...['status', 'answer', 'gather', 'reply', 'stream-ended', 'inbound', 'recording'].map((route) => ({
    name: `/telephony ${route}`,
    path: `/telephony/twilio/${connectionId}/${route}`,
    type: 'application/x-www-form-urlencoded',
    keyed: false,
  })),
];

function send(path: string, body: Buffer | string, headers: Record<string, string>) {
  return fetch(`${app.baseUrl}${path}`, { method: 'POST', headers, body });
}

/** The code and message of an answer in either door's shape. */
async function refusal(res: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await res.json()) as { code?: string; detail?: string; errors?: { message: string; extensions: { code: string } }[] };
  const graphql = body.errors?.[0];
  return graphql && !body.code
    ? { status: res.status, code: graphql.extensions.code, message: graphql.message }
    : { status: res.status, code: body.code!, message: body.detail! };
}

const serverErrors = (from: number) => logs.slice(from).filter((line) => /"level":(50|60)/.test(line) || /"stack"/.test(line));

describe('bodies in a content coding', () => {
  it('a body that does not decode as its Content-Encoding says is 400 BAD_USER_INPUT on every door, with nothing logged as an error', async () => {
    const before = logs.length;
    for (const door of DOORS) {
      for (const coding of ['gzip', 'deflate', 'br', 'GZIP']) {
        const headers: Record<string, string> = { 'content-type': door.type, 'content-encoding': coding, 'x-forwarded-for': nextClient() };
        if (door.keyed) headers['x-api-key'] = acme.apiKey;
        const res = await send(door.path, 'this is not compressed at all', headers);
        expect([door.name, coding, await refusal(res)]).toEqual([
          door.name,
          coding,
          { status: 400, code: 'BAD_USER_INPUT', message: `The body does not decode as its Content-Encoding (${coding.toLowerCase()}) says` },
        ]);
      }
      // A gzip stream cut short is refused the same way.
      const cut = gzipSync(JSON.stringify({ query: '{ me { id } }' })).subarray(0, 12);
      const res = await send(door.path, cut, {
        'content-type': door.type,
        'content-encoding': 'gzip',
        'x-api-key': acme.apiKey,
        'x-forwarded-for': nextClient(),
      });
      expect([door.name, res.status]).toEqual([door.name, 400]);
    }
    expect(serverErrors(before)).toEqual([]);
  });

  it('a coding the doors do not take (zstd, a chain, an unknown one) is 415 with Accept-Encoding, before the body is read', async () => {
    const before = logs.length;
    for (const door of DOORS) {
      for (const coding of ['zstd', 'identity, gzip', 'gzip, gzip', 'compress', 'x-unknown']) {
        const res = await send(door.path, 'a=1', {
          'content-type': door.type,
          'content-encoding': coding,
          'x-api-key': acme.apiKey,
          'x-forwarded-for': nextClient(),
        });
        expect([door.name, coding, res.headers.get('accept-encoding'), await refusal(res)]).toEqual([
          door.name,
          coding,
          'gzip, deflate, br',
          {
            status: 415,
            code: 'UNSUPPORTED_MEDIA_TYPE',
            message: `Content-Encoding "${coding}" is not taken: send the body as it is, or with one of gzip, deflate, br`,
          },
        ]);
      }
    }
    expect(serverErrors(before)).toEqual([]);
  });

  it('a body in a coding the doors take is read as it decodes, on both doors', async () => {
    const agent = await send('/api/agents', gzipSync(JSON.stringify({ name: 'Zipped', instructions: 'Help.', modelConfig: { model: 'builtin/echo' } })), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      'x-api-key': acme.apiKey,
    });
    expect([agent.status, ((await agent.json()) as { name: string }).name]).toEqual([201, 'Zipped']);
    const me = await send('/graphql', gzipSync(JSON.stringify({ query: '{ me { organization { name } } }' })), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      'x-api-key': acme.apiKey,
    });
    expect(await me.json()).toEqual({ data: { me: { organization: { name: 'Acme' } } } });
  });

  it('undecodable bodies from one address without credentials are refused 429 past RATE_LIMIT_ANONYMOUS_PER_MINUTE, on every door', async () => {
    for (const door of DOORS) {
      const address = nextClient();
      const statuses: number[] = [];
      for (let i = 0; i <= ANONYMOUS_PER_MINUTE; i++) {
        const res = await send(door.path, 'not gzip', { 'content-type': door.type, 'content-encoding': 'gzip', 'x-forwarded-for': address });
        statuses.push(res.status);
        if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      expect([door.name, statuses]).toEqual([door.name, [...Array<number>(ANONYMOUS_PER_MINUTE).fill(400), 429]]);
    }
  });
});

describe('keys a request names', () => {
  it('GraphQL aliases and fragments named like what every object inherits answer as any other name, on the database-written path too', async () => {
    await acme.rest.post('/api/agents', { name: 'Named', instructions: 'Help.', modelConfig: { model: 'builtin/echo' } });
    // As JSON text, re-serialized: a JSON.parse'd "__proto__" is a key of its own, as in the answer (an object literal's would be its prototype).
    const ask = async (query: string) =>
      JSON.stringify(
        JSON.parse(await (await send('/graphql', JSON.stringify({ query }), { 'content-type': 'application/json', 'x-api-key': acme.apiKey })).text()),
      );
    const page = '{"data":[{"name":"Named"}],"meta":{"total":1}}';
    expect(await ask('{ agents(search: "Named") { data { name } meta { total } } }')).toBe(`{"data":{"agents":${page}}}`);
    expect(await ask('{ __proto__: agents(search: "Named") { data { name } meta { total } } }')).toBe(`{"data":{"__proto__":${page}}}`);
    expect(await ask('{ constructor: agents(search: "Named") { toString: data { name } __proto__: meta { total } } }')).toBe(
      '{"data":{"constructor":{"toString":[{"name":"Named"}],"__proto__":{"total":1}}}}',
    );
    expect(await ask('query { ...__proto__ } fragment __proto__ on Query { agents(search: "Named") { data { name } meta { total } } }')).toBe(
      `{"data":{"agents":${page}}}`,
    );
  });
});
