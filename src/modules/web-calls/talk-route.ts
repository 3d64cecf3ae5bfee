import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import WebSocket, { WebSocketServer } from 'ws';
import { MessageRole } from '../agents/agent.enums.js';
import { callContext, readCallSource } from '../agents/templates/call-context-reader.js';
import { resolveVariables } from '../agents/templates/call-context.js';
import type { Attempt } from '../../platform/rate-limit.js';
import { admitUpgrade } from '../../platform/upgrade-limit.js';
import { CallStatus } from '../telephony/telephony.enums.js';
import { CallBridge } from '../voice/realtime/bridge.js';
import type { CallConversations } from '../voice/realtime/call-conversation.js';
import { MediaRate, type MediaLimits } from '../voice/realtime/media-limits.js';
import type { MediaRouteOptions } from '../voice/realtime/media-route.js';
import { StreamingCall } from '../voice/streaming/streaming-call.js';
import { claimWebCall, type AdmitWebCall, type ClaimedWebCall } from './web-call-claims.js';
import { TALK_PATH, WEB_CALL_TOKEN } from './web-call.service.js';
import type { MediaEvent } from '../telephony/carriers/media-link.js';
import { TALK_PROTOCOL, WEB_FRAME_MAX_BYTES, WEB_MEDIA_LIMITS, WebMediaLink, fromBrowser } from './web-media-link.js';

/** The talk socket's path: the page and the widget open it with the token as a subprotocol. */
export const TALK_SOCKET_PATH = `${TALK_PATH}/socket`;
/** RFC 6455: policy violation (over the rate, or not a call this pipeline speaks). */
const POLICY_VIOLATION = 1008;

export interface TalkRouteOptions extends Omit<MediaRouteOptions, 'twilio' | 'account' | 'leave' | 'limits'> {
  em: EntityManager;
  /** A place among the organization's live connections (LiveConnections), held for the call's length. */
  admit: AdmitWebCall;
  limits?: Partial<MediaLimits>;
}

function refuse(socket: Duplex, status: 403 | 429, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
}

function sizeOf(data: WebSocket.RawData): number {
  if (Array.isArray(data)) return data.reduce((total, part) => total + part.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

function asBuffer(data: WebSocket.RawData): Buffer {
  if (Array.isArray(data)) return Buffer.concat(data);
  return data instanceof ArrayBuffer ? Buffer.from(data) : data;
}

/** The origins of the gateway's own /talk page: PUBLIC_URL's, and the Host the request came to (either scheme). */
function ownOrigins(req: IncomingMessage, publicUrl: string | undefined): string[] {
  const origins: string[] = [];
  if (publicUrl) {
    try {
      origins.push(new URL(publicUrl).origin);
    } catch {
      // PUBLIC_URL is checked at start.
    }
  }
  const host = req.headers.host?.toLowerCase();
  if (host) origins.push(`http://${host}`, `https://${host}`);
  return origins;
}

/**
 * Web calls at `/talk/socket`. The upgrade carries the subprotocols `gateway-talk.v1` and the call's
 * token (never the URL, so no log holds it); the token must be unused and unexpired, the page's Origin
 * the gateway's or one its organization lists, and the organization must have a live-connection place
 * and a credit, else 403 (429 with no place left) before any WebSocket exists. Then the call runs on the
 * agent's pipeline exactly as a phone call's media stream does, through WebMediaLink.
 */
export function attachTalkRoute(server: Server, options: TalkRouteOptions): { close(): void } {
  const { logger } = options;
  const limits: MediaLimits = { ...WEB_MEDIA_LIMITS, ...options.limits };
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: WEB_FRAME_MAX_BYTES,
    handleProtocols: (protocols) => (protocols.has(TALK_PROTOCOL) ? TALK_PROTOCOL : false),
  });

  async function serve(socket: WebSocket, claimed: ClaimedWebCall): Promise<void> {
    const { callId, organizationId, agentId } = claimed;
    const answeredAt = Date.now();
    const rate = new MediaRate(limits, performance.now());
    const link = new WebMediaLink(socket, limits.maxBufferedBytes, (buffered) =>
      logger.warn({ callId, buffered, limit: limits.maxBufferedBytes }, 'web call cut: the page left more audio unread than the limit'),
    );
    let session: CallBridge | StreamingCall | null = null;
    let closed = false;
    const early: MediaEvent[] = [];
    socket.on('error', (error) => logger.warn({ callId, error: error.message }, 'web call socket error'));
    socket.on('message', (data, isBinary) => {
      if (closed) return;
      if (!rate.take(sizeOf(data), performance.now())) {
        closed = true;
        logger.warn(
          { callId, limits: { messagesPerSecond: limits.messagesPerSecond, bytesPerSecond: limits.bytesPerSecond, burstSeconds: limits.burstSeconds } },
          'web call cut: the page sent faster than the media rate',
        );
        socket.close(POLICY_VIOLATION, 'over the media rate');
        return;
      }
      const message = fromBrowser(asBuffer(data), isBinary);
      if (!message) return;
      if (session) session.fromCarrier(message);
      else if (early.length < 500) early.push(message);
    });
    socket.once('close', () => {
      closed = true;
      claimed.release();
      session?.carrierClosed();
      // The page hung up: the call is completed (one that already failed stays failed).
      void (async () => {
        await session?.settled();
        await options.tracker.apply(callId, {
          carrierCallId: '',
          status: CallStatus.completed,
          answeredBy: 'human',
          durationSeconds: Math.round((Date.now() - answeredAt) / 1000),
          at: new Date(),
        });
      })().catch((error: unknown) => logger.error({ callId, error: error instanceof Error ? error.message : String(error) }, 'a web call could not be ended'));
    });
    // The turns as they are stored are the page's live transcript.
    const conversations: CallConversations = Object.create(options.conversations);
    conversations.add = async (conversationId, organization, role, content, model, backChannel) => {
      await options.conversations.add(conversationId, organization, role, content, model, backChannel);
      link.control({ type: 'transcript', role: role === MessageRole.user ? 'caller' : 'agent', text: content });
    };
    try {
      const agent = await options.conversations.agent(organizationId, agentId);
      if (!agent) throw new Error('The web call’s agent no longer exists');
      // The conversation is opened with the call's variables, so the session finds its context there.
      const source = await readCallSource(options.em.fork(), organizationId, callId);
      const context = source ? { ...callContext(source, agent, null), variables: resolveVariables(agent, { given: claimed.variables }).values } : null;
      await options.conversations.open(callId, organizationId, agentId, `Web call with ${agent.name}`, context);
    } catch (error) {
      logger.error({ callId, error: error instanceof Error ? error.message : String(error) }, 'a web call could not be opened');
      // Shutting down, the database may be gone already: the call is then left to the restart's reconciliation, nothing rejects unhandled.
      await options.tracker
        .failLive(callId, 'The web call could not be opened', { spoken: false })
        .catch((failed: unknown) =>
          logger.error({ callId, error: failed instanceof Error ? failed.message : String(failed) }, 'a web call could not be marked failed'),
        );
      link.close(1011, 'call failed');
      return;
    }
    if (closed) return;
    const call = { id: callId, organizationId, agentId, contactId: null, to: 'web' };
    session =
      claimed.pipelineMode === 'streaming'
        ? new StreamingCall({ ...options, ...options.streaming, observeTurn: options.streaming.observeTurn, conversations, logger }, link, call)
        : new CallBridge({ ...options, conversations, logger }, link, call);
    link.control({ type: 'ready', callId });
    for (const message of early.splice(0)) session.fromCarrier(message);
    void session.start((reason) => {
      logger.warn({ callId, reason }, 'web call refused');
      socket.close(POLICY_VIOLATION, 'the agent does not speak live');
    });
  }

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if ((req.url ?? '').split('?')[0] !== TALK_SOCKET_PATH) return;
    socket.on('error', () => undefined);
    const offered = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((item) => item.trim());
    const token = offered.find((item) => WEB_CALL_TOKEN.test(item)) ?? '';
    let attempt: Attempt | null = null;
    (async () => {
      if (options.anonymous && !(attempt = await admitUpgrade(options.anonymous, req, socket))) return null;
      if (!offered.includes(TALK_PROTOCOL) || !token) return { reason: `no ${TALK_PROTOCOL} subprotocol and token`, status: 403 as const };
      const origin = typeof req.headers.origin === 'string' ? req.headers.origin : null;
      return claimWebCall(options.em, { token, origin, ownOrigins: ownOrigins(req, options.publicUrl()) }, options.admit);
    })()
      .then(async (outcome) => {
        if (outcome === null) return; // over the anonymous limit: answered 429
        if ('reason' in outcome) {
          // The token is a credential: never logged.
          logger.warn({ reason: outcome.reason, origin: req.headers.origin }, 'web call refused');
          refuse(socket, outcome.status, outcome.status === 429 ? 'Too Many Requests' : 'Forbidden');
          if (outcome.status === 403) await attempt?.refused();
          else attempt?.passed();
          return;
        }
        attempt?.passed();
        wss.handleUpgrade(req, socket, head, (ws) =>
          serve(ws, outcome).catch((error: unknown) =>
            logger.error({ error: error instanceof Error ? error.message : String(error) }, 'a web call ended in an error'),
          ),
        );
      })
      .catch((error: unknown) => {
        logger.error({ error: error instanceof Error ? error.message : String(error) }, 'web call upgrade failed');
        socket.destroy();
      });
  };
  server.on('upgrade', onUpgrade);
  return {
    close() {
      server.off('upgrade', onUpgrade);
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}
