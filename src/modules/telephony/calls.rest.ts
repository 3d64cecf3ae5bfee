import { abortSignalOf } from '../../platform/request-timeout.js';
import { write } from '../../rest/stream-write.js';
import { routesUsing } from '../../rest/routes.js';
import { CallListArgs } from './call.args.js';
import { CALL_CSV_HEADER, callCsvHeader, callCsvLine } from './call-csv.js';
import type { Actor } from '../../common/actor.js';
import type { Presenter } from '../../rest/present.js';
import type { Call } from './call.entity.js';
import { CALL_JSON_SCHEMA, CALL_PAGE_JSON_SCHEMA, callJson } from './call.types.js';
import type { CallService } from './call.service.js';
import type { RecordingService } from '../recordings/recording.service.js';

/** The services this route table calls. */
export type RouteServices = { calls: CallService; recordings: RecordingService };
const defineRoute = routesUsing<RouteServices>();

/** The calls as REST shows them, their recordings read in one statement. */
async function callsWithRecordings(services: RouteServices, presenter: Presenter, actor: Actor, calls: Call[]): Promise<Record<string, unknown>[]> {
  const recordings = await services.recordings.recordingsFor(
    actor,
    calls.map((call) => call.id),
  );
  return calls.map((call) => {
    const recording = recordings.get(call.id);
    return { ...callJson(call), recording: recording ? presenter.present('CallRecording', recording) : null };
  });
}

const CSV_EXAMPLE =
  CALL_CSV_HEADER +
  "0b6f9d3e-8c1a-4c7e-9f4b-2d5a6e7f8a90,Ada Lovelace,'+14155550123,completed,1,5e2d1c4b-3a29-4f18-8e07-6d5c4b3a2910,completed,answered,2026-11-25T10:00:00.000Z,2026-11-25T10:00:04.000Z,2026-11-25T10:01:10.000Z,66,,1,812.5\r\n";

/** The calls: every attempt a record, read on both doors; an execution's results as CSV. */
export const callRoutes = [
  defineRoute({
    method: 'get',
    path: '/calls',
    operationId: 'listCalls',
    summary:
      'A page of calls, newest first: {data, meta}; filter by executionId, programId, contactId, status, direction and queuedAfter/queuedBefore; search matches the numbers',
    description:
      'A page of the organization’s calls, every attempt its own record. Filters combine; an executionId, programId or contactId of another organization matches nothing. ' +
      'queuedAfter is inclusive and queuedBefore exclusive (ISO 8601 date-times). sortBy is one of createdAt, updatedAt, queuedAt, endedAt, durationSeconds (calls without one last).',
    tag: 'Calls',
    query: CallListArgs,
    response: CALL_PAGE_JSON_SCHEMA,
    async handler({ actor, query, services, presenter }) {
      const page = await services.calls.list(actor, query);
      return { data: await callsWithRecordings(services, presenter, actor, page.data), meta: page.meta };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/calls/{id}',
    operationId: 'getCall',
    summary: 'Read a call',
    tag: 'Calls',
    response: CALL_JSON_SCHEMA,
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      const [call] = await callsWithRecordings(services, presenter, actor, [await services.calls.get(actor, params.id!)]);
      return call;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/executions/{id}/calls.csv',
    operationId: 'exportExecutionCalls',
    summary: 'The execution’s results as CSV, streamed: one row per contact with its last call',
    description:
      'text/csv (RFC 4180, CRLF, a header line), one row per contact of the execution, called or not, with its last call (highest attempt, then latest queuedAt): ' +
      'contactId, contactName, phone, contactStatus, attempts, lastCallId, lastCallStatus, outcome, queuedAt, answeredAt, endedAt, durationSeconds, errorText, creditsCharged; ' +
      'then, when the program’s agents have analysis plans, the last call’s analysis: analysisStatus, summary (when a plan asks for one), one data.<field> per top-level field of the plans’ schemas (objects and arrays as JSON), analysisError. ' +
      'A cell starting with =, +, -, @, a tab or a carriage return gets a leading apostrophe, so a spreadsheet never runs it. Written as it is read (chunked), not held to RESPONSE_MAX_BYTES; ' +
      'a download cut short (REQUEST_TIMEOUT_MS, a server error) ends without the closing chunk, so a client sees it is incomplete.',
    tag: 'Calls',
    errors: [404],
    streams: {
      mediaType: 'text/csv',
      example: CSV_EXAMPLE,
      headers: { 'Content-Disposition': { description: 'attachment; filename="execution-<id>-calls.csv"', schema: { type: 'string' } } },
    },
    async handler({ actor, params, services, res }) {
      const execution = await services.calls.csvExecution(actor, params.id!);
      const columns = await services.calls.csvAnalysisColumns(actor, execution);
      res.status(200);
      res.setHeader('content-type', 'text/csv; charset=utf-8');
      res.setHeader('content-disposition', `attachment; filename="execution-${execution.id}-calls.csv"`);
      if (!(await write(res, callCsvHeader(columns)))) return;
      try {
        for await (const rows of services.calls.csvRows(actor, execution.id)) {
          if (!(await write(res, rows.map((row) => callCsvLine(row, columns)).join('')))) return; // the client left: read no further page
        }
      } catch (error) {
        // Headers are sent: no problem body can follow. Cut the answer (no closing chunk) and let the error be logged.
        res.destroy();
        if (abortSignalOf(res)?.aborted) return; // timed out or the client left: expected, nothing to report
        throw error;
      }
      res.end();
    },
  }),
];
