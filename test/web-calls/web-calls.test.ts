import { CreateWebCallDocument, UpdateOrganizationDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { encodeSpeech } from '../../src/modules/voice/streaming/builtin-speech.js';
import { TalkSocket } from './talk-socket.js';

// Web calls through both doors and the talk socket's protocol: the token (single-use, short-lived,
// the organization's own agent, an allowed origin), the call record (channel web), the credit, the
// live-connection places, and the media bounds. The browser itself is in talk-page.test.ts.

const SILENCE = Buffer.alloc(8000, 0xff); // 1 s of μ-law silence

describe('web calls', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let globex: TestOrganization;
  let agentId: string;

  const streamingAgent = async (org: TestOrganization, extra: Record<string, unknown> = {}) => {
    const created = await org.rest.post('/api/agents', {
      name: 'Front desk',
      instructions: 'Answer the caller.',
      modelConfig: { model: 'builtin/echo' },
      voiceConfig: { pipelineMode: 'streaming', sttProvider: 'builtin', ttsProvider: 'builtin' },
      ...extra,
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const ticket = async (org: TestOrganization = acme, body: Record<string, unknown> = { agentId }) => {
    const created = await org.rest.post('/api/web-calls', body);
    expect(created.status).toBe(201);
    return created.body as { token: string; url: string; expiresAt: string; agentId: string };
  };

  beforeAll(async () => {
    app = await startTestApp({ telephony: { ...(await import('../../src/config.js')).loadConfig({}).telephony, publicUrl: 'https://gateway.example' } });
    acme = await app.organization('Acme');
    globex = await app.organization('Globex');
    await acme.grantCredits(20);
    await globex.grantCredits(5);
    agentId = await streamingAgent(acme);
  });
  afterAll(() => app.close());

  describe('POST /api/web-calls and createWebCall', () => {
    it('answers a single-use token and the /talk URL on both doors, expiring in 5 minutes', async () => {
      const rest = await ticket();
      expect(rest).toEqual({
        agentId,
        token: expect.stringMatching(/^wct_[A-Za-z0-9_-]{43}$/),
        url: `https://gateway.example/talk#token=${rest.token}`,
        expiresAt: expect.any(String),
      });
      const minutes = (Date.parse(rest.expiresAt) - Date.now()) / 60_000;
      expect(minutes).toBeGreaterThan(4);
      expect(minutes).toBeLessThanOrEqual(5);
      const { createWebCall } = await acme.graphql.ok(CreateWebCallDocument, { input: { agentId, variables: { clinic: 'Downtown' } } });
      expect(createWebCall).toMatchObject({ agentId, url: `https://gateway.example/talk#token=${createWebCall.token}` });
      expect(createWebCall.token).not.toBe(rest.token);
      // Only its hash is kept.
      const stored = await app.sql<{ token_hash: string }>('select token_hash from web_call_tokens where organization_id = ?', [acme.organizationId]);
      expect(stored.map((row) => row.token_hash).join()).not.toContain(rest.token.slice(4, 20));
    });

    it('keeps a token no longer than a day after it expired: the organization’s next web call removes it', async () => {
      const old = await ticket();
      const otherOld = await ticket(globex, { agentId: await streamingAgent(globex) });
      const hashOf = "encode(sha256(convert_to(?, 'UTF8')), 'hex')";
      await app.sql(`update web_call_tokens set expires_at = now() - interval '25 hours' where token_hash in (${hashOf}, ${hashOf})`, [
        old.token,
        otherOld.token,
      ]);
      await ticket();
      const left = await app.sql<{ organization_id: string }>(`select organization_id from web_call_tokens where token_hash in (${hashOf}, ${hashOf})`, [
        old.token,
        otherOld.token,
      ]);
      expect(left.map((row) => row.organization_id)).toEqual([globex.organizationId]);
    });

    it('another organization’s agent is NOT_FOUND on both doors', async () => {
      const rest = await globex.rest.post('/api/web-calls', { agentId });
      expect(rest.status).toBe(404);
      expect(rest.body.code).toBe('NOT_FOUND');
      const graphql = await globex.graphql.run(CreateWebCallDocument, { input: { agentId } });
      expect(graphql.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    });

    it.each([
      ['an agentId that is not a UUID', { agentId: 'nope' }, 'agentId'],
      ['variables that are not values', { agentId: '00000000-0000-4000-8000-000000000000', variables: { clinic: { nested: true } } }, 'variables'],
    ])('%s is BAD_USER_INPUT on both doors, naming the field', async (_name, input, field) => {
      const rest = await acme.rest.post('/api/web-calls', input);
      expect(rest.status).toBe(400);
      expect(rest.body.code).toBe('BAD_USER_INPUT');
      expect(rest.body.errors.map((error: { field: string }) => error.field)).toEqual([field]);
      const graphql = await acme.graphql.run(CreateWebCallDocument, { input: input as never });
      expect(graphql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect((graphql.errors?.[0]?.extensions.errors as { field: string }[]).map((error) => error.field)).toEqual([field]);
    });

    it('an agent that does not speak live (batch) is a CONFLICT on both doors', async () => {
      const batch = await acme.rest.post('/api/agents', { name: 'Batch', instructions: 'Hi.', modelConfig: { model: 'builtin/echo' } });
      const rest = await acme.rest.post('/api/web-calls', { agentId: batch.body.id });
      expect(rest.status).toBe(409);
      expect(rest.body.detail).toContain('pipelineMode streaming or sts');
      const graphql = await acme.graphql.run(CreateWebCallDocument, { input: { agentId: batch.body.id } });
      expect(graphql.errors?.[0]?.extensions.code).toBe('CONFLICT');
    });
  });

  describe('webCallOrigins, an organization setting on both doors', () => {
    it('is set by the owner on both doors and refuses what is not an origin with the same error', async () => {
      const rest = await acme.rest.put('/api/organization', { webCallOrigins: ['https://shop.acme.example'] });
      expect(rest.status).toBe(200);
      expect(rest.body.webCallOrigins).toEqual(['https://shop.acme.example']);
      const bad = await acme.rest.put('/api/organization', { webCallOrigins: ['https://shop.acme.example/path'] });
      expect(bad.status).toBe(400);
      expect(bad.body.errors.map((error: { field: string }) => error.field)).toEqual(['webCallOrigins']);
      const graphqlBad = await acme.graphql.run(UpdateOrganizationDocument, { input: { webCallOrigins: ['https://shop.acme.example/path'] } });
      expect(graphqlBad.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      const { updateOrganization } = await acme.graphql.ok(UpdateOrganizationDocument, {
        input: { webCallOrigins: ['https://shop.acme.example', 'http://localhost:8080'] },
      });
      expect(updateOrganization.webCallOrigins).toEqual(['https://shop.acme.example', 'http://localhost:8080']);
    });
  });

  describe('the talk socket', () => {
    it('carries a call on the streaming pipeline: the greeting, the caller’s words, the reply, a web call record, one credit', async () => {
      const { token } = await ticket();
      const balance = async () => (await acme.rest.get('/api/organization')).body.creditBalance as number;
      const before = await balance();
      const talk = await TalkSocket.open(app.baseUrl, token);
      if (typeof talk === 'number') throw new Error(`refused ${talk}`);
      await talk.until(() => talk.controls.some((message) => message.type === 'ready'));
      const callId = String(talk.controls.find((message) => message.type === 'ready')!.callId);
      await talk.until(() => talk.transcript.some((line) => line.role === 'agent'));
      expect(talk.audioBytes).toBeGreaterThan(0);
      expect(talk.transcript[0]).toEqual({ role: 'agent', text: 'Hello, this is Front desk. How can I help you?' });
      talk.sendAudio(Buffer.concat([encodeSpeech('I would like a table'), SILENCE]));
      await talk.until(() => talk.transcript.some((line) => line.role === 'caller') && talk.transcript.filter((line) => line.role === 'agent').length >= 2);
      expect(talk.transcript.find((line) => line.role === 'caller')).toEqual({ role: 'caller', text: 'I would like a table' });
      expect(talk.transcript.filter((line) => line.role === 'agent')[1]!.text).toContain('I would like a table');
      const live = await acme.rest.get(`/api/calls/${callId}`);
      expect(live.body).toMatchObject({ channel: 'web', carrier: 'web', direction: 'inbound', status: 'in_progress', agentId, creditsCharged: 1 });
      expect(await balance()).toBe(before - 1);
      talk.close();
      await talk.closed;
      await waitFor(async () => (await acme.rest.get(`/api/calls/${callId}`)).body.status === 'completed');
      const ended = await acme.rest.get(`/api/calls/${callId}`);
      expect(ended.body).toMatchObject({ channel: 'web', status: 'completed', outcome: 'answered', conversationId: expect.any(String) });
      const messages = await acme.rest.get(`/api/conversations/${ended.body.conversationId}/messages`);
      expect(messages.status).toBe(200);
      // Another organization does not see it.
      expect((await globex.rest.get(`/api/calls/${callId}`)).status).toBe(404);
    });

    it('refuses a token used once, an expired one, one it never issued, and no token, with 403 before any socket', async () => {
      const { token } = await ticket();
      const first = await TalkSocket.open(app.baseUrl, token);
      expect(first).toBeInstanceOf(TalkSocket);
      expect(await TalkSocket.open(app.baseUrl, token)).toBe(403);
      (first as TalkSocket).close();
      const stale = await ticket();
      await app.sql("update web_call_tokens set expires_at = now() - interval '1 second' where token_hash = encode(sha256(convert_to(?, 'UTF8')), 'hex')", [
        stale.token,
      ]);
      expect(await TalkSocket.open(app.baseUrl, stale.token)).toBe(403);
      expect(await TalkSocket.open(app.baseUrl, `wct_${'A'.repeat(43)}`)).toBe(403);
      expect(await TalkSocket.open(app.baseUrl, 'not-a-token')).toBe(403);
    });

    it('lets in the gateway’s own origin and the organization’s listed ones only; a refused origin leaves the token unused', async () => {
      await acme.rest.put('/api/organization', { webCallOrigins: ['https://shop.acme.example'] });
      const { token } = await ticket();
      expect(await TalkSocket.open(app.baseUrl, token, 'https://evil.example')).toBe(403);
      expect(await TalkSocket.open(app.baseUrl, token, null)).toBe(403);
      // Globex's list does not let a page of Acme's in, nor the reverse.
      await globex.rest.put('/api/organization', { webCallOrigins: ['https://globex.example'] });
      expect(await TalkSocket.open(app.baseUrl, token, 'https://globex.example')).toBe(403);
      const talk = await TalkSocket.open(app.baseUrl, token, 'https://shop.acme.example');
      expect(talk).toBeInstanceOf(TalkSocket);
      (talk as TalkSocket).close();
      const own = await TalkSocket.open(app.baseUrl, (await ticket()).token, 'https://gateway.example');
      expect(own).toBeInstanceOf(TalkSocket);
      (own as TalkSocket).close();
    });

    it('refuses a call once the organization has no credit, keeping the token unused', async () => {
      const poor = await app.organization('Poor');
      const poorAgent = await streamingAgent(poor);
      const { token } = await ticket(poor, { agentId: poorAgent });
      expect(await TalkSocket.open(app.baseUrl, token)).toBe(403);
      await poor.grantCredits(1);
      const talk = await TalkSocket.open(app.baseUrl, token);
      expect(talk).toBeInstanceOf(TalkSocket);
      (talk as TalkSocket).close();
    });

    it('holds one of the organization’s live-connection places while it lasts, and is refused 429 when none is left', async () => {
      const connections = app.gateway.services.live.connections;
      const globexAgent = await streamingAgent(globex);
      const talk = (await TalkSocket.open(app.baseUrl, (await ticket(globex, { agentId: globexAgent })).token)) as TalkSocket;
      expect(connections.count({ organizationId: globex.organizationId }).organization).toBe(1);
      talk.close();
      await talk.closed;
      await waitFor(async () => connections.count({ organizationId: globex.organizationId }).organization === 0);
      const held: (() => void)[] = [];
      const actor = { organizationId: globex.organizationId, userId: '', roles: [], via: 'api-key' as const };
      for (let i = 0; i < 100_000; i++) {
        try {
          held.push(connections.open({ ...actor, apiKeyId: `filler-${i}` }));
        } catch {
          break;
        }
      }
      const { token } = await ticket(globex, { agentId: globexAgent });
      expect(await TalkSocket.open(app.baseUrl, token)).toBe(429);
      held.forEach((release) => release());
      const after = await TalkSocket.open(app.baseUrl, token);
      expect(after).toBeInstanceOf(TalkSocket);
      (after as TalkSocket).close();
    });

    it('cuts a page that sends a frame larger than documented (1009) or audio faster than real time (1008)', async () => {
      const big = (await TalkSocket.open(app.baseUrl, (await ticket()).token)) as TalkSocket;
      big.socket.send(Buffer.alloc(1601, 0xff), { binary: true });
      expect((await big.closed).code).toBe(1009);
      const fast = (await TalkSocket.open(app.baseUrl, (await ticket()).token)) as TalkSocket;
      // 40 s of audio at once: far past the 10 s burst at twice real time.
      fast.sendAudio(Buffer.alloc(320_000, 0xff), 1600);
      expect(await fast.closed).toEqual({ code: 1008, reason: 'over the media rate' });
    });
  });

  /** Polls what the server writes after a socket closed (a few statements, bounded). */
  async function waitFor(test: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 1000; i++) {
      if (await test()) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
    throw new Error('the condition never held');
  }
});
