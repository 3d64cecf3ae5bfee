import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import WebSocket, { WebSocketServer } from 'ws';
import { isUuid } from '../../../db/base.entity.js';
import { at, query } from '../../../db/sql.js';
import type { CarrierAccount } from '../../telephony/carrier.js';
import type { CarrierModule } from '../../telephony/carriers/carrier-module.js';
import { carrierModuleOf, type CarrierModules } from '../../telephony/carriers/index.js';
import type { Attempt } from '../../../platform/rate-limit.js';
import { admitUpgrade, type UpgradeLimit } from '../../../platform/upgrade-limit.js';
import { CallBridge, type BridgeDeps, type BridgedCall } from './bridge.js';
import { StreamingCall, type StreamingDeps } from '../streaming/streaming-call.js';
import type { MediaEvent, MediaFraming, MediaLink } from '../../telephony/carriers/media-link.js';
import { mediaStreamUrl, streamNonceHash } from '../../telephony/carriers/stream-url.js';
import { MEDIA_LIMITS, MediaRate, type MediaLimits } from './media-limits.js';

/** `/telephony/{kind}/{connectionId}/media/{callId}/{nonce}` (the bare `/media`, or one without its nonce, is matched only to be refused). */
const MEDIA_PATH = /^\/telephony\/([^/?#]+)\/([^/?#]+)\/media(?:\/([^/?#]+)\/([^/?#]*))?$/;
/** WebSocket close code for a stream that may not be carried (RFC 6455: policy violation). */
export const POLICY_VIOLATION = 1008;
/** How long a new stream may take to send its `start`. */
const START_TIMEOUT_MS = 10_000;

export interface MediaRouteOptions extends Omit<BridgeDeps, 'logger'> {
  em: EntityManager;
  /** The carriers by kind: the path's kind names the one whose signature and framing the stream uses. */
  carriers: CarrierModules;
  account: (connectionId: string) => Promise<CarrierAccount | null>;
  publicUrl: () => string | undefined;
  logger: Logger;
  /** The HTTP door's anonymous per-IP limit: a refused upgrade counts against its address, and an address over the limit is answered 429. */
  anonymous?: UpgradeLimit;
  /** Upgrades to these paths belong to another handler on the same server (GraphQL subscriptions): left alone. */
  leave?: (path: string) => boolean;
  /** The streaming pipeline's parties, for calls whose agent's pipelineMode is streaming. */
  streaming: Pick<StreamingDeps, 'model' | 'recognizers' | 'synthesizers' | 'rules' | 'observeTurn' | 'endConversation' | 'preparations'>;
  /** The inbound rate and the unread bytes a stream may have (default MEDIA_LIMITS). */
  limits?: Partial<MediaLimits>;
}

/** The size of a message as ws hands it over. */
function sizeOf(data: WebSocket.RawData): number {
  if (Array.isArray(data)) return data.reduce((total, part) => total + part.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

/** What the media route drives for one call: the speech-to-speech bridge or the streaming pipeline. */
interface MediaSession {
  start(refuse: (reason: string) => void): Promise<void>;
  fromCarrier(event: MediaEvent): void;
  carrierClosed(): void;
  /** Resolves once every turn it was given is stored. */
  settled(): Promise<void>;
}

/**
 * A carrier's socket as a session's media link, each call written in the carrier's framing. A reader
 * that leaves more than `maxBufferedBytes` written and not taken by its socket (it does not read, or
 * reads slower than the audio comes) is cut at once: `slow` is told, and the socket is terminated,
 * which ends the session as a hang-up does.
 */
export function socketLink(
  socket: WebSocket,
  framing: MediaFraming,
  streamId: string,
  maxBufferedBytes = MEDIA_LIMITS.maxBufferedBytes,
  slow: (buffered: number) => void = () => undefined,
): MediaLink {
  const writer = framing.writer(streamId);
  const send = (message: string) => {
    if (socket.readyState !== WebSocket.OPEN) return;
    socket.send(message);
    if (socket.bufferedAmount > maxBufferedBytes) {
      slow(socket.bufferedAmount);
      socket.terminate();
    }
  };
  return {
    audio: (payload) => send(writer.audio(payload)),
    clear: () => send(writer.clear()),
    mark: (name) => send(writer.mark(name)),
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
 * A carrier's media streams at `/telephony/{kind}/{connectionId}/media/{callId}/{nonce}`, the URL
 * the call's answer document gave (Twilio: stream-twiml.ts), served by the module of that kind (a
 * kind no module serves is 404). The upgrade must be signed as that carrier signs it (Twilio: a
 * valid `X-Twilio-Signature` over that whole wss URL, PUBLIC_URL with a ws/wss scheme + path, made
 * with the connection's auth token; Telnyx signs none: its module's verifyUpgrade), and the nonce must be the call's, unused, with the call in
 * progress on that connection: one UPDATE consumes it (so a replayed handshake, a second stream or
 * another replica's finds nothing), else 403 before any WebSocket exists. Then the stream's `start`
 * must name the same call (our call id, as a custom parameter) and its carrier call, else the
 * socket is closed with 1008 and nothing more is changed. Messages are read and written in the
 * module's framing; the sessions see only MediaEvents and a MediaLink.
 */
export function attachMediaRoute(server: Server, options: MediaRouteOptions): { close(): void } {
  const { logger } = options;
  const limits: MediaLimits = { ...MEDIA_LIMITS, ...options.limits };
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const bridged = new Map<string, MediaSession>();
  /** A call's last session's writes, until stored: a stream opened again (back from a transfer) starts after them, so it reads the whole call so far. */
  const settling = new Map<string, Promise<void>>();

  async function authorized(req: IncomingMessage, carrier: CarrierModule, connectionId: string, callId: string, nonce: string): Promise<boolean> {
    const publicUrl = options.publicUrl();
    const account = isUuid(connectionId) ? await options.account(connectionId) : null;
    if (!account || (account.kind ?? carrier.kind) !== carrier.kind || !publicUrl) return false;
    const query = (req.url ?? '').includes('?') ? (req.url ?? '').slice((req.url ?? '').indexOf('?')) : '';
    const header = (name: string) => {
      const value = req.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    const upgrade = { url: `${mediaStreamUrl(publicUrl, connectionId, carrier.kind)}/${callId}/${nonce}${query}`, header, fields: {} };
    return carrier.webhooks.verifyUpgrade ? carrier.webhooks.verifyUpgrade(upgrade, account) : carrier.webhooks.verify(upgrade, account);
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

  /** Whether the stream's `start` names the call its URL opened: our call id, and the carrier's call id. */
  function startRefusal(call: CallRow, start: MediaEvent & { kind: 'start' }): string | null {
    if (start.callId !== call.id) return 'its start names another call id';
    if (!call.carrier_call_id || start.carrierCallId !== call.carrier_call_id) return 'its start names another carrier call';
    if (!start.streamId) return 'no stream id';
    if (!call.agent_id) return 'the call has no agent';
    if (bridged.has(call.id)) return 'the call already has a media stream';
    return null;
  }

  function serve(socket: WebSocket, carrier: CarrierModule, connectionId: string, row: CallRow): void {
    const framing = carrier.media;
    let bridge: MediaSession | null = null;
    let starting = false;
    let cut = false;
    const rate = new MediaRate(limits, performance.now());
    const startTimer = setTimeout(() => socket.close(POLICY_VIOLATION, 'no start'), START_TIMEOUT_MS);
    socket.on('error', (error) => logger.warn({ connectionId, error: error.message }, 'media stream socket error'));
    socket.on('message', (data, isBinary) => {
      if (cut) return;
      // Every message counts, binary ones (which are ignored) too: a stream faster than the media rate for longer than its burst is cut.
      if (!rate.take(sizeOf(data), performance.now())) {
        cut = true;
        logger.warn(
          {
            connectionId,
            callId: row.id,
            limits: { messagesPerSecond: limits.messagesPerSecond, bytesPerSecond: limits.bytesPerSecond, burstSeconds: limits.burstSeconds },
          },
          'media stream cut: it sent faster than the media rate',
        );
        socket.close(POLICY_VIOLATION, 'over the media rate');
        return;
      }
      if (isBinary) return;
      const event = framing.parse(data.toString());
      if (!event) return;
      if (bridge) {
        bridge.fromCarrier(event);
        return;
      }
      if (event.kind !== 'start' || starting) return;
      starting = true;
      clearTimeout(startTimer);
      const refusal = startRefusal(row, event);
      if (refusal) {
        logger.warn({ connectionId, callId: row.id, reason: refusal }, 'media stream refused: its start does not name the call its URL opened');
        socket.close(POLICY_VIOLATION, 'not this call');
        return;
      }
      if (socket.readyState !== WebSocket.OPEN) return;
      const link = socketLink(socket, framing, event.streamId, limits.maxBufferedBytes, (buffered) =>
        logger.warn({ connectionId, callId: row.id, buffered, limit: limits.maxBufferedBytes }, 'media stream cut: it left more audio unread than the limit'),
      );
      const call: BridgedCall = {
        id: row.id,
        organizationId: row.organization_id,
        agentId: row.agent_id!,
        contactId: row.contact_id,
        to: row.to_number,
        pipelineMode: row.pipeline_mode,
      };
      const opened: MediaSession =
        row.pipeline_mode === 'streaming'
          ? new StreamingCall({ ...options, ...options.streaming, observeTurn: options.streaming.observeTurn, logger }, link, call)
          : new CallBridge({ ...options, logger }, link, call);
      bridge = opened;
      bridged.set(call.id, opened);
      const before = settling.get(call.id) ?? Promise.resolve();
      socket.once('close', () => {
        opened.carrierClosed();
        bridged.delete(call.id);
        const writes = opened.settled().finally(() => {
          if (settling.get(call.id) === writes) settling.delete(call.id);
        });
        settling.set(call.id, writes);
      });
      void before.then(() =>
        opened.start((reason) => {
          logger.warn({ connectionId, callId: call.id, reason }, 'media stream refused');
          socket.close(POLICY_VIOLATION, 'not a speech-to-speech or streaming call');
        }),
      );
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
    const carrier = carrierModuleOf(options.carriers, match[1]!);
    if (!carrier) {
      refuse(socket, 404, 'Not Found');
      return;
    }
    let connectionId: string;
    try {
      connectionId = decodeURIComponent(match[2]!);
    } catch {
      refuse(socket, 404, 'Not Found');
      return;
    }
    const [, , , callId = '', nonce = ''] = match;
    socket.on('error', () => undefined);
    let attempt: Attempt | null = null;
    (async () => {
      // A carrier's own upgrades are signed and claim a call: only refusals are counted, as on /telephony.
      if (options.anonymous && !(attempt = await admitUpgrade(options.anonymous, req, socket))) return null;
      if (!callId || !nonce) return 'no call and nonce in its URL';
      if (!(await authorized(req, carrier, connectionId, callId, nonce))) return 'no valid signature for this connection';
      return (await claim(callId, nonce, connectionId)) ?? 'not the nonce of a call in progress on this connection, or already used';
    })()
      .then(async (outcome) => {
        if (outcome === null) return; // over the anonymous limit: answered 429
        if (typeof outcome === 'string') {
          // The nonce is a credential: never logged.
          logger.warn({ connectionId, callId: isUuid(callId) ? callId : undefined, carrier: carrier.kind, reason: outcome }, 'media stream refused');
          refuse(socket, 403, 'Forbidden');
          await attempt?.refused();
          return;
        }
        attempt?.passed();
        wss.handleUpgrade(req, socket, head, (ws) => serve(ws, carrier, connectionId, outcome));
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
