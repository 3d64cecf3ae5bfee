import { eventually as waitUntil } from '../helpers/eventually.js';
import { randomUUID } from 'node:crypto';
import { postAsTwilio } from '../support/twilio-webhook.js';
import { ConversationDocument, StsCallDocument } from '../generated/graphql.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import type { FakeTwilio } from '../support/fake-twilio.js';
import { insertCall } from '../telephony/call-seed.js';

// What the speech-to-speech tests of every provider share: a live call of the fake Twilio's account,
// the <Stream> URL its signed answer gives, the call's row, and the turn-latency record on both doors.

/** The world a provider's sts test file sets up in its beforeAll: read when a helper runs. */
export interface StsWorld {
  app: TestApp;
  twilioFake: FakeTwilio;
  /** The organization whose calls and conversations are read. */
  acme: TestOrganization;
}

export function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  return waitUntil(read, done, { what, everyMs: 20 });
}

export const unescapeXml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

export function stsHelpers(world: () => StsWorld) {
  return {
    /** A call of `agentId` in progress on `connectionId` (answered 5 s ago), with a CallSid of its own. */
    async liveCall(call: { org: TestOrganization; agentId: string | null; contactId: string | null; connectionId: string; status?: string }): Promise<string> {
      const { app } = world();
      const id = await insertCall(app, {
        organizationId: call.org.organizationId,
        agentId: call.agentId,
        contactId: call.contactId,
        carrier: 'twilio',
        carrierCallId: `CA${randomUUID().replace(/-/g, '')}`,
        status: call.status ?? 'in_progress',
        queuedAt: new Date(Date.now() - 10_000),
        answeredAt: new Date(Date.now() - 5_000),
      });
      await app.sql('update calls set carrier_connection_id = ? where id = ?', [call.connectionId, id]);
      return id;
    },

    /**
     * What Twilio is told once the call is answered (the signed answer webhook, as Twilio asks it, with
     * the call's CallSid): the <Stream> URL it then opens, and the call's CallSid its `start` carries.
     */
    async answeredStream(callId: string, fields: Record<string, string> = { CallStatus: 'in-progress' }): Promise<{ url: string; callSid: string }> {
      const { app, twilioFake } = world();
      const [row] = await app.sql<{ carrier_call_id: string; carrier_connection_id: string }>(
        'select carrier_call_id, carrier_connection_id from calls where id = ?',
        [callId],
      );
      const url = `${app.baseUrl}/telephony/twilio/${row!.carrier_connection_id}/answer?callId=${callId}`;
      const params = { CallSid: row!.carrier_call_id, AccountSid: twilioFake.accountSid, ...fields };
      const res = await postAsTwilio(url, params, twilioFake.authToken);
      expect(res.status).toBe(200);
      const twiml = await res.text();
      const stream = /<Stream url="([^"]+)"/.exec(twiml);
      if (!stream) throw new Error(`no <Stream> in the answer: ${twiml}`);
      return { url: unescapeXml(stream[1]!), callSid: row!.carrier_call_id };
    },

    async callRow(callId: string) {
      const [row] = await world().app.sql<{
        status: string;
        outcome: string | null;
        error_text: string | null;
        conversation_id: string | null;
        updated_at: Date;
      }>('select status, outcome, error_text, conversation_id, updated_at from calls where id = ?', [callId]);
      return row!;
    },

    /** The stored transcript on the REST door, once it has `count` messages; the GraphQL door then reads the same. */
    async transcript(conversationId: string, count: number): Promise<{ role: string; content: string }[]> {
      const { acme } = world();
      const rest = await eventually(
        () => acme.rest.get(`/api/conversations/${conversationId}/messages?limit=100`),
        (res) => res.body.data?.length === count,
        'the stored transcript',
      );
      const messages = rest.body.data.map((message: { role: string; content: string }) => ({ role: message.role, content: message.content }));
      const graphql = await acme.graphql.ok(ConversationDocument, { id: conversationId, limit: 100 });
      expect(graphql.conversation.messages.data.map((message) => ({ role: message.role, content: message.content }))).toEqual(messages);
      return messages;
    },

    /**
     * The call's turn-latency record once the stream has ended: `turns` turns of `provider`, each at least
     * the double's declared delay and its total the provider's and the gateway's shares, the median and
     * the largest from them, the same on GraphQL, and another organization's 404 on both doors.
     */
    async expectTurnLatency(callId: string, expected: { provider: string; turns: number; delayMs: number; startedAt: number; other: TestOrganization }) {
      const { acme } = world();
      const rest = await eventually(
        () => acme.rest.get(`/api/calls/${callId}`),
        (res) => res.body.turnLatency !== null,
        'the call’s turn latency',
      );
      const latency = rest.body.turnLatency;
      expect(latency.provider).toBe(expected.provider);
      expect(latency.turns).toHaveLength(expected.turns);
      for (const turn of latency.turns) {
        expect(Date.parse(turn.endOfSpeechAt)).toBeGreaterThanOrEqual(expected.startedAt);
        expect(Date.parse(turn.endOfSpeechAt)).toBeLessThanOrEqual(Date.now());
        // The double's delay runs from its own send of the end of speech; the gateway stamps its arrival a socket
        // hop and an event-loop wait later, which a busy machine makes long: the share is at least half the delay.
        expect(turn.providerMs).toBeGreaterThanOrEqual(expected.delayMs / 2);
        expect(turn.gatewayMs).toBeGreaterThanOrEqual(0);
        expect(turn.totalMs).toBeCloseTo(turn.providerMs + turn.gatewayMs, 2);
        expect(turn.totalMs).toBeGreaterThanOrEqual(expected.delayMs / 2);
      }
      const totals = latency.turns.map((turn: { totalMs: number }) => turn.totalMs).sort((a: number, b: number) => a - b);
      expect(latency.p50Ms).toBe(totals[Math.floor((totals.length - 1) / 2)]);
      expect(latency.maxMs).toBe(totals[totals.length - 1]);
      const starts = latency.turns.map((turn: { endOfSpeechAt: string }) => Date.parse(turn.endOfSpeechAt));
      expect([...starts].sort((a, b) => a - b)).toEqual(starts);
      // The same record on the GraphQL door; another organization sees the call on neither.
      expect((await acme.graphql.ok(StsCallDocument, { id: callId })).call.turnLatency).toEqual(latency);
      expect((await expected.other.rest.get(`/api/calls/${callId}`)).status).toBe(404);
      expect((await expected.other.graphql.run(StsCallDocument, { id: callId })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      return latency as { turns: { endOfSpeechAt: string; totalMs: number; providerMs: number; gatewayMs: number }[] };
    },
  };
}
