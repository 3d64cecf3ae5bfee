// The reference's "Try it out": every request example of /api/openapi.json is a request the server
// accepts. Each one is sent as it stands to a fresh organization that has the records it names (the
// ids of EXAMPLE_IDS, and the path's ids, swapped for records made there first), and must answer 2xx.
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { EXAMPLE_IDS, REQUEST_EXAMPLES } from '../../src/rest/openapi-examples.js';
import { randomBytes } from 'node:crypto';

type Json = Record<string, any>;
type Kind = keyof typeof EXAMPLE_IDS | 'apiKey' | 'conversation' | 'businessEntity' | 'team' | 'program' | 'webhookEndpoint' | 'tool' | 'mcpServer';

/** The examples' carrier account, as exampleOf writes it (the fake Twilio takes these credentials). */
const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
const AUTH_TOKEN = '5f4dcc3b5aa765d61d8327deb882cf99';

/** A path segment before `{id}` → the kind of record the id is. */
const SEGMENT_KINDS: Record<string, Kind> = {
  'api-keys': 'apiKey',
  users: 'user',
  agents: 'agent',
  conversations: 'conversation',
  'knowledge-bases': 'knowledgeBase',
  audience: 'audience',
  contacts: 'contact',
  'business-entities': 'businessEntity',
  teams: 'team',
  'call-flows': 'callFlow',
  programs: 'program',
  'carrier-connections': 'carrierConnection',
  'phone-numbers': 'phoneNumber',
  'webhook-endpoints': 'webhookEndpoint',
  tools: 'tool',
  'mcp-servers': 'mcpServer',
};

function pathKinds(path: string): { name: string; kind: Kind }[] {
  const segments = path.split('/');
  return segments.flatMap((segment, index) => {
    const name = /^\{(\w+)\}$/.exec(segment)?.[1];
    if (!name) return [];
    const kind =
      name === 'id'
        ? SEGMENT_KINDS[segments[index - 1]!]
        : SEGMENT_KINDS[Object.keys(SEGMENT_KINDS).find((key) => SEGMENT_KINDS[key] === name.replace(/Id$/, ''))!];
    if (!kind) throw new Error(`No kind of record for {${name}} in ${path}`);
    return [{ name, kind }];
  });
}

/** The records of one organization, each made once, on demand, through the door a user would use. */
class Records {
  private readonly made = new Map<Kind, Promise<string>>();
  private static emails = 0;

  constructor(private readonly org: TestOrganization) {}

  id(kind: Kind): Promise<string> {
    let id = this.made.get(kind);
    if (!id) {
      id = this.make(kind);
      this.made.set(kind, id);
    }
    return id;
  }

  /** The example with every EXAMPLE_IDS id it names swapped for a record of this organization. */
  async fill(example: unknown): Promise<unknown> {
    let text = JSON.stringify(example);
    for (const [kind, placeholder] of Object.entries(EXAMPLE_IDS) as [Kind, string][]) {
      if (text.includes(placeholder)) text = text.replaceAll(placeholder, await this.id(kind));
    }
    return JSON.parse(text);
  }

  private async created(path: string, body: unknown): Promise<string> {
    const res = await this.org.rest.post(path, body);
    if (res.status >= 300) throw new Error(`POST ${path} for a prerequisite answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.id;
  }

  private agentActivated = false;

  /** The prerequisite agent, activated once. */
  async activeAgent(): Promise<void> {
    if (this.agentActivated) return;
    expect((await this.org.rest.post(`/api/agents/${await this.id('agent')}/activate`)).status).toBe(200);
    this.agentActivated = true;
  }

  private async make(kind: Kind): Promise<string> {
    switch (kind) {
      case 'agent':
        return this.created('/api/agents', { name: 'Prerequisite agent', instructions: 'Be brief.', modelConfig: { model: 'builtin/echo' } });
      case 'liveAgent':
        return this.created('/api/agents', {
          name: 'Web desk',
          instructions: 'Be brief.',
          modelConfig: { model: 'builtin/echo' },
          voiceConfig: { pipelineMode: 'streaming', sttProvider: 'builtin', ttsProvider: 'builtin' },
        });
      case 'knowledgeBase':
        return this.created('/api/knowledge-bases', { name: 'Opening hours' });
      case 'contact':
        return this.created('/api/contacts', { name: 'Prerequisite contact', phone: '+14155550999' });
      case 'audience': {
        const id = await this.created('/api/audience', { name: 'Prerequisite audience' });
        const added = await this.org.rest.post(`/api/audience/${id}/members`, { contactIds: [await this.id('contact')] });
        expect(added.status).toBe(200);
        return id;
      }
      case 'callFlow':
        return this.created('/api/call-flows', await this.fill(REQUEST_EXAMPLES.CreateCallFlowInput));
      case 'user': {
        const res = await this.org.rest.post('/api/users', {
          email: `prerequisite${++Records.emails}-${randomBytes(4).toString('hex')}@example.test`,
          role: 'member',
        });
        if (res.status >= 300) throw new Error(`POST /api/users answered ${res.status}: ${JSON.stringify(res.body)}`);
        return res.body.user?.id ?? res.body.id;
      }
      case 'carrierConnection':
        return this.created('/api/carrier-connections', { name: 'Twilio', carrier: 'twilio', accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
      case 'phoneNumber':
        return this.created('/api/phone-numbers', { number: '+14155550998', carrierConnectionId: await this.id('carrierConnection') });
      case 'event': {
        // An agent's activation is told as agent.activated.
        await this.activeAgent();
        const res = await this.org.rest.get('/api/events?type=agent.activated&limit=1');
        expect(res.body.data.length).toBe(1);
        return res.body.data[0].id;
      }
      case 'apiKey':
        return this.created('/api/auth/api-keys', { name: 'Prerequisite key', prefix: 'pre' });
      case 'conversation':
        return this.created(`/api/agents/${await this.id('agent')}/conversations`, {});
      case 'businessEntity':
        return this.created('/api/business-entities', { contactId: await this.id('contact'), type: 'order', name: 'Prerequisite order' });
      case 'team':
        return this.created('/api/teams', { name: 'Prerequisite team' });
      case 'program': {
        // An active campaign: an execution is made of one (a program calls through active agents).
        await this.activeAgent();
        const id = await this.created('/api/programs', await this.fill(REQUEST_EXAMPLES.CreateProgramInput));
        const activated = await this.org.rest.post(`/api/programs/${id}/activate`);
        if (activated.status >= 300) throw new Error(`activate answered ${activated.status}: ${JSON.stringify(activated.body)}`);
        return id;
      }
      case 'webhookEndpoint':
        return this.created('/api/webhook-endpoints', { url: 'https://example.com/prerequisite' });
      case 'tool':
        return this.created('/api/tools', REQUEST_EXAMPLES.CreateToolInput);
      case 'mcpServer':
        return this.created('/api/mcp-servers', { name: 'Prerequisite server', url: 'https://example.com/prerequisite-mcp' });
    }
  }
}

let app: TestApp;
let twilio: FakeTwilio;
let operations: { method: string; path: string; example: unknown }[];

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  // The sandbox has no DNS: webhook hosts are not looked up (a real gateway resolves example.com to a public address).
  app = await startTestApp({
    telephony: { twilioApiBaseUrl: twilio.url, credentialsKey: randomBytes(32), publicUrl: undefined },
    webhooks: { allowPrivate: true, timeoutMs: 2000 },
    tools: { allowPrivate: true, mcpRefreshMs: 600_000 },
  });
  const document = (await app.rest().get('/api/openapi.json')).body as Json;
  operations = Object.entries(document.paths as Json).flatMap(([path, methods]) =>
    Object.entries(methods as Json).flatMap(([method, operation]) => {
      const media = (operation as Json).requestBody?.content?.['application/json'];
      return media ? [{ method: method.toUpperCase(), path, example: media.example }] : [];
    }),
  );
});
afterAll(async () => {
  await app.close();
  await twilio.close();
});

it('every operation with a request body documents an example of it', () => {
  expect(operations.length).toBeGreaterThan(30);
  expect(operations.filter((operation) => operation.example === undefined).map((operation) => `${operation.method} ${operation.path}`)).toEqual([]);
});

it('every request example is accepted as it stands (2xx), in an organization that has the records it names', async () => {
  const refused: string[] = [];
  let index = 0;
  for (const { method, path, example } of operations) {
    const org = await app.organization(`Examples ${++index}`);
    const records = new Records(org);
    let url = path;
    for (const { name, kind } of pathKinds(path)) url = url.replace(`{${name}}`, await records.id(kind));
    // A single call is placed with an active agent and paid with a credit, as a user's first one is.
    if (method === 'POST' && path === '/api/calls') {
      await records.activeAgent();
      await org.grantCredits(1);
    }
    const res = await org.rest.request(method, url, await records.fill(example));
    if (res.status < 200 || res.status >= 300)
      refused.push(`${method} ${path} → ${res.status}: ${JSON.stringify(res.body?.errors ?? res.body?.detail ?? res.body)}`);
  }
  expect(refused).toEqual([]);
});
