import type { Request, Response } from 'express';
import { toAppError } from '../../../common/error-mapping.js';
import { defineRoute } from '../../../rest/routes.js';
import type { Event } from '../event.entity.js';
import { REPLAY_BATCH } from './live.service.js';

const SSE_EXAMPLE =
  'id: 0190d6a2-6a39-7c1e-9c59-1f0e5f0a1b2c\nevent: execution.started\ndata: {"id":"…","status":"running","from":"scheduled","to":"running","reason":"user",…}\n\n' +
  ': heartbeat\n\n' +
  'id: 0190d6a2-7b10-7d2a-8f11-2a3b4c5d6e7f\nevent: execution.progress\ndata: {"id":"…","contactsCompleted":4,"contactsPending":7,…}\n\n';

const STREAM_PATH = /^\/api\/executions\/[^/]+\/stream\/?$/;

/** The SSE route holds its connection open: the request timeout and the organization's concurrency places do not apply to it (app.ts). */
export function isLiveStream(req: Request): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && STREAM_PATH.test(req.originalUrl.split('?')[0]!);
}

/** One SSE message: id, event type, the payload as JSON on one data line. */
function message(event: Event): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.payload)}\n\n`;
}

function write(res: Response, chunk: string): boolean {
  if (res.writableEnded || res.destroyed) return false;
  res.write(chunk);
  return true;
}

/** Server-Sent Events for REST clients: an execution's events, resumable with Last-Event-ID. */
export const executionStreamRoutes = [
  defineRoute({
    method: 'get',
    path: '/executions/{id}/stream',
    operationId: 'streamExecutionEvents',
    summary: 'The execution’s events as Server-Sent Events (text/event-stream): what is kept, then live; resumable with Last-Event-ID',
    description:
      'Each message is one event: `id:` the event id, `event:` its type (execution.*, call.started, call.ended, trigger.fired), `data:` its payload as JSON (GET /api/events/{id} shows the same). ' +
      'Without Last-Event-ID the stream starts with every event of the execution still kept (EVENTS_RETENTION_DAYS), oldest first; with Last-Event-ID (an event id, as browsers send it when they reconnect) ' +
      'it starts after that event, without repeating it; then live events follow as they commit, on any replica. A comment line (`: heartbeat`) is sent every SSE_HEARTBEAT_MS (15 s) so proxies keep the connection. ' +
      'The stream stays open until the client closes it; it is not held to REQUEST_TIMEOUT_MS or RESPONSE_MAX_BYTES. 404 for an execution of another organization, as GET /api/executions/{id}.',
    tag: 'Events',
    errors: [404],
    streams: {
      mediaType: 'text/event-stream',
      example: SSE_EXAMPLE,
    },
    async handler({ actor, params, services, req, res }) {
      const live = services.live;
      const { executionId, stream } = await live.executionStream(actor, params.id!);
      const lastEventId = req.get('last-event-id')?.trim() || null;
      res.status(200);
      res.setHeader('content-type', 'text/event-stream; charset=utf-8');
      res.setHeader('x-accel-buffering', 'no');
      res.flushHeaders();
      const stop = () => void stream.return();
      res.once('close', stop);
      const heartbeat = setInterval(() => write(res, ': heartbeat\n\n'), live.heartbeatMs);
      try {
        // Subscribed before the replay: what commits meanwhile waits in the stream; what the replay already sent is skipped.
        const replayed = new Set<string>();
        let after = await live.replayCursor(actor, lastEventId);
        for (;;) {
          const rows = await live.replayPage(actor, executionId, after);
          for (const row of rows) {
            replayed.add(row.id);
            if (!write(res, `id: ${row.id}\nevent: ${row.type}\ndata: ${row.payload}\n\n`)) return;
            after = row;
          }
          if (rows.length < REPLAY_BATCH) break;
        }
        for await (const event of stream) {
          if (replayed.has(event.id)) continue;
          if (!write(res, message(event))) return;
        }
      } catch (error) {
        // Headers are sent: no problem body can follow. The client reconnects with Last-Event-ID.
        res.destroy();
        if (toAppError(error).code === 'UNAVAILABLE') return; // shutting down, or the client fell too far behind
        throw error;
      } finally {
        clearInterval(heartbeat);
        res.off('close', stop);
        stop();
        if (!res.writableEnded && !res.destroyed) res.end();
      }
    },
  }),
];
