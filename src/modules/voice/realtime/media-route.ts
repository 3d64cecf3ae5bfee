import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import WebSocket, { WebSocketServer } from 'ws';
import { isUuid } from '../../../db/base.entity.js';
import { at, query } from '../../../db/sql.js';
import type { CarrierAccount, CarrierAdapter } from '../../telephony/carrier.js';
import { admitUpgrade, countRefusal, type UpgradeLimit } from '../../../platform/upgrade-limit.js';
import { CallBridge, type BridgeDeps, type BridgedCall } from './bridge.js';
import { StreamingCall, type CarrierLink, type StreamingDeps } from '../streaming/streaming-call.js';
import { mediaStreamUrl, streamNonceHash } from './stream-twiml.js';

/** `/telephony/twilio/{connectionId}/media/{callId}/{nonce}` (the bare `/media`, or one without its nonce, is matched only to be refused). */
const MEDIA_PATH = /^\/telephony\/twilio\/([^/?#]+)\/media(?:\/([^/?#]+)\/([^/?#]*))?$/;
/** WebSocket close code for a stream that may not be carried (RFC 6455: policy violation). */
export const POLICY_VIOLATION = 1008;
/** How long a new stream may take to send its `start`. */
const START_TIMEOUT_MS = 10_000;

export interface MediaRouteOptions extends Omit<BridgeDeps, 'logger'> {
  em: EntityManager;
  /** The Twilio adapter: its signature check. */
  twilio: CarrierAdapter;
  account: (connectionId: string) => Promise<CarrierAccount | null>;
  publicUrl: () => string | undefined;
  logger: Logger;
  /** The HTTP door's anonymous per-IP limit: a refused upgrade counts against its address, and an address over the limit is answered 429. */
  anonymous?: UpgradeLimit;
  /** Upgrades to these paths belong to another handler on the same server (GraphQL subscriptions): left alone. */
  leave?: (path: string) => boolean;
  /** The streaming pipeline's parties, for calls whose agent's pipelineMode is streaming. */
  streaming: Pick<StreamingDeps, 'model' | 'recognizers' | 'synthesizers' | 'rules' | 'observeTurn' | 'endConversation'>;
}

/** What the media route drives for one call: the speech-to-speech bridge or the streaming pipeline. */
interface MediaSession {
  start(refuse: (reason: string) => void): Promise<void>;
  fromCarrier(message: Record<string, unknown>): void;
  carrierClosed(): void;
}

/** Twilio's socket as the streaming pipeline's carrier link. */
export function socketLink(socket: WebSocket): CarrierLink {
  return {
    send(message) {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
    },
    close(code, reason) {
      if (socket.readyState === WebSocket.OPEN) socket.close(code, reason);
    },
    get open() {
      return socket.readyState === WebSocket.OPEN;
    },
  };
}

interface CallRow {
  id: string;
  organization_id: string;
  agent_id: string | null;
  contact_id: string | null;
  to_number: string;
  carrier_call_id: string | null;
  pipeline_mode: string | null;
}

function refuse(socket: Duplex, status: 403 | 404, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
}

/**
 * Twilio Media Streams at `/telephony/twilio/{connectionId}/media/{callId}/{nonce}`, the URL the
 * call's answer TwiML gave (stream-twiml.ts). The upgrade must carry a valid `X-Twilio-Signature`
 * over that whole wss URL (PUBLIC_URL with a ws/wss scheme + path) made with the connection's auth
 * token, and the nonce must be the call's, unused, with the call in progress on that connection:
 * one UPDATE consumes it (so a replayed handshake, a second stream or another replica's finds
 * nothing), else 403 before any WebSocket exists. Then the `start` message must name the same call
 * (customParameters.callId) and its carrier call (callSid), else the socket is closed with 1008 and
 * nothing more is changed.
 */
export function attachMediaRoute(server: Server, options: MediaRouteOptions): { close(): void } {
  const { logger } = options;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const bridged = new Map<string, MediaSession>();

  async function authorized(req: IncomingMessage, connectionId: string, callId: string, nonce: string): Promise<boolean> {
    const publicUrl = options.publicUrl();
    const account = isUuid(connectionId) ? await options.account(connectionId) : null;
    const signature = req.headers['x-twilio-signature'];
    if (!account || !publicUrl || typeof signature !== 'string') return false;
    const query = (req.url ?? '').includes('?') ? (req.url ?? '').slice((req.url ?? '').indexOf('?')) : '';
    return options.twilio.checkSignature(account, `${mediaStreamUrl(publicUrl, connectionId)}/${callId}/${nonce}${query}`, {}, signature);
  }

  /**
   * Consumes the call's stream nonce, in one statement: the call of this connection whose nonce it
   * is, in progress, whose stream never opened. The first upgrade wins; any other finds no row.
   */
  async function claim(callId: string, nonce: string, connectionId: string): Promise<CallRow | null> {
    if (!isUuid(callId)) return null;
    const now = at(new Date());
    const [row] = await query<CallRow>(
      options.em.fork(),
      `update calls set stream_nonce_hash = null, stream_opened_at = ?::timestamptz, updated_at = ?::timestamptz
        where id = ? and carrier_connection_id = ? and stream_nonce_hash = ? and status = 'in_progress' and stream_opened_at is null
        returning id, organization_id, agent_id, contact_id, to_number, carrier_call_id,
                  (select a.voice_config->>'pipelineMode' from agents a where a.id = calls.agent_id and a.organization_id = calls.organization_id) as pipeline_mode`,
      [now, now, callId, connectionId, streamNonceHash(nonce)],
    );
    return row ?? null;
  }

  /** Whether the stream's `start` names the call its URL opened: our call id, and the carrier's call sid. */
  function startRefusal(call: CallRow, start: Record<string, unknown>, streamSid: string): string | null {
    const parameters = (start.customParameters ?? {}) as Record<string, unknown>;
    if (parameters.callId !== call.id) return 'its start names another call id';
    if (!call.carrier_call_id || start.callSid !== call.carrier_call_id) return 'its start names another carrier call';
    if (!streamSid) return 'no streamSid';
    if (!call.agent_id) return 'the call has no agent';
    if (bridged.has(call.id)) return 'the call already has a media stream';
    return null;
  }

  function serve(socket: WebSocket, connectionId: string, row: CallRow): void {
    let bridge: MediaSession | null = null;
    let starting = false;
    const startTimer = setTimeout(() => socket.close(POLICY_VIOLATION, 'no start'), START_TIMEOUT_MS);
    socket.on('error', (error) => logger.warn({ connectionId, error: error.message }, 'media stream socket error'));
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(data.toString()) as Record<string, unknown>;
      } catch {
        return;
      }
      if (bridge) {
        bridge.fromCarrier(message);
        return;
      }
      if (message.event !== 'start' || starting) return;
      starting = true;
      clearTimeout(startTimer);
      const start = (message.start ?? {}) as Record<string, unknown>;
      const streamSid = typeof message.streamSid === 'string' ? message.streamSid : typeof start.streamSid === 'string' ? start.streamSid : '';
      const refusal = startRefusal(row, start, streamSid);
      if (refusal) {
        logger.warn({ connectionId, callId: row.id, reason: refusal }, 'media stream refused: its start does not name the call its URL opened');
        socket.close(POLICY_VIOLATION, 'not this call');
        return;
      }
      if (socket.readyState !== WebSocket.OPEN) return;
      const call: BridgedCall = { id: row.id, organizationId: row.organization_id, agentId: row.agent_id!, contactId: row.contact_id, to: row.to_number };
      const opened: MediaSession =
        row.pipeline_mode === 'streaming'
          ? new StreamingCall({ ...options, ...options.streaming, observeTurn: options.streaming.observeTurn, logger }, socketLink(socket), call, streamSid)
          : new CallBridge({ ...options, logger }, socket, call, streamSid);
      bridge = opened;
      bridged.set(call.id, opened);
      socket.once('close', () => {
        opened.carrierClosed();
        bridged.delete(call.id);
      });
      void opened.start((reason) => {
        logger.warn({ connectionId, callId: call.id, reason }, 'media stream refused');
        socket.close(POLICY_VIOLATION, 'not a speech-to-speech or streaming call');
      });
    });
    socket.on('close', () => clearTimeout(startTimer));
  }

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0]!;
    const match = MEDIA_PATH.exec(path);
    if (!match && options.leave?.(path)) return;
    if (!match) {
      refuse(socket, 404, 'Not Found');
      return;
    }
    let connectionId: string;
    try {
      connectionId = decodeURIComponent(match[1]!);
    } catch {
      refuse(socket, 404, 'Not Found');
      return;
    }
    const [, , callId = '', nonce = ''] = match;
    socket.on('error', () => undefined);
    (async () => {
      // Twilio's own upgrades are signed and claim a call: only refusals are counted, as on /telephony.
      if (options.anonymous && !(await admitUpgrade(options.anonymous, req, socket))) return null;
      if (!callId || !nonce) return 'no call and nonce in its URL';
      if (!(await authorized(req, connectionId, callId, nonce))) return 'no valid signature for this connection';
      return (await claim(callId, nonce, connectionId)) ?? 'not the nonce of a call in progress on this connection, or already used';
    })()
      .then(async (outcome) => {
        if (outcome === null) return; // over the anonymous limit: answered 429
        if (typeof outcome === 'string') {
          // The nonce is a credential: never logged.
          logger.warn({ connectionId, callId: isUuid(callId) ? callId : undefined, signed: Boolean(req.headers['x-twilio-signature']), reason: outcome }, 'media stream refused');
          refuse(socket, 403, 'Forbidden');
          if (options.anonymous) await countRefusal(options.anonymous, req);
          return;
        }
        wss.handleUpgrade(req, socket, head, (ws) => serve(ws, connectionId, outcome));
      })
      .catch((error: unknown) => {
        logger.error({ connectionId, error: error instanceof Error ? error.message : String(error) }, 'media stream upgrade failed');
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
