import type { Request, Response } from 'express';
import { toAppError } from '../../../common/error-mapping.js';
import { organizationGateOf } from '../../../platform/organization-gate.js';
import { Turns } from '../../../platform/turns.js';
import { routesUsing } from '../../../rest/routes.js';
import type { Event } from '../event.entity.js';
import type { LiveStream } from './live-feed.js';
import { FINAL_EVENTS, REPLAY_BATCH, type ReplayRow } from './live.service.js';
import { SseWriter, type WriteOutcome } from './sse-writer.js';
import type { LiveService } from './live.service.js';

/** The services this route table calls. */
export type RouteServices = { live: LiveService };
const defineRoute = routesUsing<RouteServices>();

const SSE_EXAMPLE =
  'id: 0190d6a2-6a39-7c1e-9c59-1f0e5f0a1b2c\nevent: execution.started\ndata: {"id":"…","status":"running","from":"scheduled","to":"running","reason":"user",…}\n\n' +
  ': heartbeat\n\n' +
  'id: 0190d6a2-7b10-7d2a-8f11-2a3b4c5d6e7f\nevent: execution.progress\ndata: {"id":"…","contactsCompleted":4,"contactsPending":7,…}\n\n';

/** The turns every SSE replay of this process reads its pages in. */
const REPLAY_TURNS = new Turns();

const STREAM_PATH = /^\/api\/executions\/[^/]+\/stream\/?$/;

/** The SSE route holds its connection open: the request timeout and the organization's concurrency places do not apply to it (app.ts). */
export function isLiveStream(req: Request): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && STREAM_PATH.test(req.originalUrl.split('?')[0]!);
}

/** One SSE message of a live event: id, event type, the payload as JSON on one data line. */
function message(event: Event): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.payload)}\n\n`;
}

/** One SSE message of a replayed row: its payload is already JSON text (jsonb's text has no line break). */
function replayed(row: ReplayRow): string {
  return `id: ${row.id}\nevent: ${row.type}\ndata: ${row.payload}\n\n`;
}

/** One of the organization's places, taken and given back around each page of a replay. */
function placeOf(res: Response, organizationId: string) {
  const gate = organizationGateOf(res);
  let leave: (() => void) | null = null;
  return {
    get held(): boolean {
      return leave !== null;
    },
    async take(): Promise<void> {
      leave = gate ? await gate.take(organizationId) : () => undefined;
    },
    leave(): void {
      leave?.();
      leave = null;
    },
  };
}

/** Server-Sent Events for REST clients: an execution's events, resumable with Last-Event-ID. */
export const executionStreamRoutes = [
  defineRoute({
    method: 'get',
    path: '/executions/{id}/stream',
    operationId: 'streamExecutionEvents',
    summary: 'The execution’s events as Server-Sent Events (text/event-stream): what is kept, then live; resumable with Last-Event-ID',
    description:
      'Each message is one event: `id:` the event id, `event:` its type (execution.*, call.started, call.ended, call.analyzed, trigger.fired), `data:` its payload as JSON (GET /api/events/{id} shows the same). ' +
      'Without Last-Event-ID the stream starts with every event of the execution still kept (EVENTS_RETENTION_DAYS), oldest first; with Last-Event-ID (an event id, as browsers send it when they reconnect) ' +
      'it starts after that event, without repeating it; then live events follow as they commit, on any replica. A comment line (`: heartbeat`) is sent every SSE_HEARTBEAT_MS (15 s) so proxies keep the connection. ' +
      "The stream ends after the execution's final event (execution.completed, execution.stopped, execution.cancelled), at once after the replay when it is final already; " +
      "a reconnect with the Last-Event-ID of that last event answers 204 No Content, which stops a browser's EventSource from reconnecting. " +
      'Until then it stays open until the client closes it; it is not held to REQUEST_TIMEOUT_MS or RESPONSE_MAX_BYTES. 404 for an execution of another organization, as GET /api/executions/{id}. ' +
      'An API key holds at most LIVE_CONNECTIONS_PER_KEY open streams and subscription sockets, an organization LIVE_CONNECTIONS_PER_ORG: past them 429 RATE_LIMITED. ' +
      'A client that reads too slowly (more than SSE_MAX_BUFFERED_BYTES written and not yet sent) is cut off; it reconnects with Last-Event-ID.',
    tag: 'Events',
    errors: [404, 429],
    streams: {
      mediaType: 'text/event-stream',
      example: SSE_EXAMPLE,
      noContent: 'The execution is final and nothing is left after Last-Event-ID: the stream is over (an EventSource stops reconnecting)',
    },
    async handler({ actor, params, services, req, res }) {
      const live = services.live;
      let release: () => void;
      try {
        release = live.connections.open(actor);
      } catch (error) {
        res.setHeader('Retry-After', '5');
        throw error;
      }
      // A client that left while its credentials were checked has closed already: its place goes back now.
      if (res.closed) return release();
      // However the answer ends (the client, a cut, an error, a 404 sent, shutdown), the connection's place is given back.
      res.once('close', release);
      const place = placeOf(res, actor.organizationId);
      const writer = new SseWriter(res, live.maxBufferedBytes);
      let stream: LiveStream<Event> | undefined;
      const stop = () => void stream?.return();
      res.once('close', stop);
      let heartbeat: NodeJS.Timeout | undefined;
      try {
        // The check (404 before any header), the cursor and the replay run under one of the organization's places, a page at a time.
        await place.take();
        const opened = await live.executionStream(actor, params.id!);
        stream = opened.stream;
        if (!writer.open) return;
        let after = await live.replayCursor(actor, req.get('last-event-id')?.trim() || null);
        let rows: ReplayRow[] = [];
        let next = 0;
        let lastPage = false;
        if (opened.final) {
          // Final: the replay is all there is. Nothing left after Last-Event-ID answers 204, which tells
          // a browser's EventSource not to reconnect (it reconnects after the 200 stream below ends).
          rows = await live.replayPage(actor, opened.executionId, after);
          lastPage = rows.length < REPLAY_BATCH;
          if (rows.length === 0) {
            res.status(204).end();
            return;
          }
        }
        res.status(200);
        res.setHeader('content-type', 'text/event-stream; charset=utf-8');
        res.setHeader('x-accel-buffering', 'no');
        res.flushHeaders();
        heartbeat = setInterval(() => writer.write(': heartbeat\n\n'), live.heartbeatMs);
        // Subscribed before the replay: what commits meanwhile waits in the stream; what the replay already sent is skipped.
        const sent = new Set<string>();
        // After the execution's final move the stream ends: the client has everything there will be.
        let ended = opened.final;
        for (;;) {
          // One page of all the process's replays per turn of the event loop (platform/turns.ts), waited for without a place.
          const reading = next === rows.length;
          if (reading) {
            await REPLAY_TURNS.next();
            if (!writer.open) return;
          }
          if (!place.held) await place.take();
          if (reading) {
            rows = await live.replayPage(actor, opened.executionId, after);
            next = 0;
            lastPage = rows.length < REPLAY_BATCH;
          }
          let outcome: WriteOutcome = 'sent';
          while (next < rows.length && outcome === 'sent') {
            const row = rows[next++]!;
            outcome = writer.write(replayed(row));
            if (outcome === 'gone') return;
            sent.add(row.id);
            after = row;
            if (FINAL_EVENTS.has(row.type)) ended = true;
          }
          place.leave();
          // The socket is full: the rest of the page waits, without a place, until it has drained.
          if (outcome === 'full') {
            await writer.drained();
            if (!writer.open) return;
          } else if (lastPage) break;
        }
        if (ended) return;
        // Live events are written as they come; a client that does not keep up passes the ceiling and is cut.
        for await (const event of stream) {
          if (sent.has(event.id)) continue;
          if (writer.write(message(event)) === 'gone') return;
          if (FINAL_EVENTS.has(event.type)) return;
        }
      } catch (error) {
        if (!res.headersSent) throw error; // 404 and the like: a problem, nothing of the stream was sent
        // Headers are sent: no problem body can follow. The client reconnects with Last-Event-ID.
        res.destroy();
        if (toAppError(error).code === 'UNAVAILABLE') return; // shutting down, or the client fell too far behind
        throw error;
      } finally {
        place.leave();
        clearInterval(heartbeat);
        res.off('close', stop);
        stop();
        if (res.headersSent && !res.writableEnded && !res.destroyed) res.end();
      }
    },
  }),
];
