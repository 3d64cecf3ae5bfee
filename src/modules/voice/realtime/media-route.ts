import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import WebSocket, { WebSocketServer } from 'ws';
import { isUuid } from '../../../db/base.entity.js';
import { query } from '../../programs/runner/sql.js';
import type { CarrierAccount, CarrierAdapter } from '../../telephony/carrier.js';
import { isFinalCallStatus } from '../../telephony/call-state.js';
import type { CallStatus } from '../../telephony/telephony.enums.js';
import { CallBridge, type BridgeDeps, type BridgedCall } from './bridge.js';
import { mediaStreamUrl } from './stream-twiml.js';

const MEDIA_PATH = /^\/telephony\/twilio\/([^/?#]+)\/media$/;
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
  /** Upgrades to these paths belong to another handler on the same server (GraphQL subscriptions): left alone. */
  leave?: (path: string) => boolean;
}

interface CallRow {
  id: string;
  organization_id: string;
  agent_id: string | null;
  contact_id: string | null;
  to_number: string;
  status: CallStatus;
  carrier_connection_id: string | null;
}

function refuse(socket: Duplex, status: 403 | 404, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
}

/**
 * Twilio Media Streams at `/telephony/twilio/{connectionId}/media`: the upgrade must carry a
 * valid `X-Twilio-Signature` over the stream's wss URL (PUBLIC_URL with a ws/wss scheme + path)
 * made with the connection's auth token, else 403 before any WebSocket exists; then the `start`
 * message must name (customParameters.callId) a live call of that connection with an agent, else
 * the socket is closed with 1008 and nothing is changed. One bridge per call at a time.
 */
export function attachMediaRoute(server: Server, options: MediaRouteOptions): { close(): void } {
  const { logger } = options;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const bridged = new Map<string, CallBridge>();

  async function authorized(req: IncomingMessage, connectionId: string): Promise<boolean> {
    const publicUrl = options.publicUrl();
    const account = isUuid(connectionId) ? await options.account(connectionId) : null;
    const signature = req.headers['x-twilio-signature'];
    if (!account || !publicUrl || typeof signature !== 'string') return false;
    const query = (req.url ?? '').includes('?') ? (req.url ?? '').slice((req.url ?? '').indexOf('?')) : '';
    return options.twilio.checkSignature(account, `${mediaStreamUrl(publicUrl, connectionId)}${query}`, {}, signature);
  }

  async function liveCall(callId: string, connectionId: string): Promise<BridgedCall | string> {
    if (!isUuid(callId)) return 'no call id';
    const [row] = await query<CallRow>(
      options.em.fork(),
      'select id, organization_id, agent_id, contact_id, to_number, status, carrier_connection_id from calls where id = ?',
      [callId],
    );
    if (!row || row.carrier_connection_id !== connectionId) return 'no such call on this connection';
    if (isFinalCallStatus(row.status)) return 'the call has ended';
    if (!row.agent_id) return 'the call has no agent';
    if (bridged.has(row.id)) return 'the call already has a media stream';
    return { id: row.id, organizationId: row.organization_id, agentId: row.agent_id, contactId: row.contact_id, to: row.to_number };
  }

  function serve(socket: WebSocket, connectionId: string): void {
    let bridge: CallBridge | null = null;
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
      const parameters = (start.customParameters ?? {}) as Record<string, unknown>;
      const streamSid = typeof message.streamSid === 'string' ? message.streamSid : typeof start.streamSid === 'string' ? start.streamSid : '';
      void liveCall(typeof parameters.callId === 'string' ? parameters.callId : '', connectionId)
        .then((call) => {
          if (typeof call === 'string' || !streamSid) {
            logger.warn({ connectionId, reason: typeof call === 'string' ? call : 'no streamSid' }, 'media stream refused: it names no live call of this connection');
            socket.close(POLICY_VIOLATION, 'not a live call of this connection');
            return;
          }
          if (socket.readyState !== WebSocket.OPEN) return;
          const opened = new CallBridge({ ...options, logger }, socket, call, streamSid);
          bridge = opened;
          bridged.set(call.id, opened);
          socket.once('close', () => {
            opened.carrierClosed();
            bridged.delete(call.id);
          });
          void opened.start((reason) => {
            logger.warn({ connectionId, callId: call.id, reason }, 'media stream refused');
            socket.close(POLICY_VIOLATION, 'not a speech-to-speech call');
          });
        })
        .catch((error: unknown) => {
          logger.error({ connectionId, error: error instanceof Error ? error.message : String(error) }, 'media stream could not start');
          socket.close(1011, 'internal error');
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
    socket.on('error', () => undefined);
    authorized(req, connectionId)
      .then((ok) => {
        if (!ok) {
          logger.warn({ connectionId, signed: Boolean(req.headers['x-twilio-signature']) }, 'media stream refused: no valid signature for this connection');
          refuse(socket, 403, 'Forbidden');
          return;
        }
        wss.handleUpgrade(req, socket, head, (ws) => serve(ws, connectionId));
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
