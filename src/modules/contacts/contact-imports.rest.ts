import { PageArgs } from '../../common/pagination.js';
import { abortSignalOf } from '../../platform/request-timeout.js';
import { ref } from '../../rest/json-schema.js';
import { routesUsing } from '../../rest/routes.js';
import { write } from '../../rest/stream-write.js';
import { streamedBody } from '../../rest/body-parsers.js';
import { CreateContactImportInput } from './contact-import.inputs.js';
import type { ContactImportService } from './contact-import.service.js';

/** The services this route table calls. */
export type RouteServices = { contactImports: ContactImportService };
const defineRoute = routesUsing<RouteServices>();

const CSV = {
  mediaType: 'text/csv',
  description:
    'The CSV (RFC 4180, UTF-8, a BOM allowed), streamed: a header naming its columns (phone, and any of externalId, name, timeZone, attributes.<key>), then a row per contact. ' +
    'At most IMPORT_MAX_BYTES (256 MiB by default, counted decoded) and IMPORT_MAX_ROWS rows (1,000,000), 100 columns, 1,000 characters a cell. ' +
    'It may be compressed, with Content-Encoding: gzip, deflate or br (decoded as it streams); another coding → 415.',
  example: 'externalId,name,phone,timeZone,attributes.tier\r\ncrm-1001,Ada Lovelace,+14155550100,America/Los_Angeles,gold\r\n',
};
const REFUSED_EXAMPLE = 'row,reason,externalId,name,phone\r\n3,phone "555" is not E.164 (+ and 7 to 15 digits),crm-1002,Grace,555\r\n';
const JOB =
  'The import answers at once (202) with its status queued; a worker writes its rows 500 per transaction off the request. Read its progress here, or as import.progress / import.completed / import.failed events (GET /api/events, SSE, the events subscription). One import of an organization runs at a time: others wait queued.';

/** CSV imports of contacts: created, sent their file, read, cancelled and resumed. */
export const contactImportRoutes = [
  defineRoute({
    method: 'post',
    path: '/imports',
    operationId: 'createContactImport',
    summary: 'Import contacts from a CSV sent as the body (text/csv): a background job, answered 202 with its status',
    description: `${JOB} mode create (all or nothing), upsert (default) or skip; key phone (default) or externalId; audienceId: a static audience the contacts join.`,
    tag: 'Contacts',
    query: CreateContactImportInput,
    rawBody: CSV,
    status: 202,
    response: ref('ContactImport'),
    errors: [404, 409, 413],
    async handler({ actor, query, services, presenter, req, res }) {
      return presenter.present('ContactImport', await services.contactImports.createWithFile(actor, query, streamedBody(req, res)));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/imports/{id}/file',
    operationId: 'uploadContactImportFile',
    summary: 'Send the CSV of an import created awaiting its file (GraphQL createContactImport): answered 202, queued',
    description: `${JOB} An import that already has its file → 409.`,
    tag: 'Contacts',
    rawBody: CSV,
    status: 202,
    response: ref('ContactImport'),
    errors: [404, 409, 413],
    async handler({ actor, params, services, presenter, req, res }) {
      return presenter.present('ContactImport', await services.contactImports.upload(actor, params.id!, streamedBody(req, res)));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/imports',
    operationId: 'listContactImports',
    summary: 'A page of the organization’s imports, newest first: {data, meta} with cursors',
    tag: 'Contacts',
    query: PageArgs,
    response: ref('ContactImportPage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.present('ContactImportPage', await services.contactImports.list(actor, query));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/imports/{id}',
    operationId: 'getContactImport',
    summary: 'An import: its status, rows read, imported, updated, skipped, refused and do-not-call counts',
    tag: 'Contacts',
    response: ref('ContactImport'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('ContactImport', await services.contactImports.get(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/imports/{id}/cancel',
    operationId: 'cancelContactImport',
    summary: 'Cancel a waiting or running import: what it wrote stays, counted; an ended (or cancelling) one → 409',
    description:
      'A create import that wrote contacts (all or nothing) answers status cancelling at once: the import worker deletes them 500 per transaction (imported counts down, import.progress events), then it is cancelled (import.cancelled).',
    tag: 'Contacts',
    response: ref('ContactImport'),
    errors: [404, 409],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('ContactImport', await services.contactImports.cancel(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/imports/{id}/resume',
    operationId: 'resumeContactImport',
    summary: 'Continue a cancelled or failed upsert or skip import from the first row it did not count; anything else → 409',
    tag: 'Contacts',
    response: ref('ContactImport'),
    errors: [404, 409],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('ContactImport', await services.contactImports.resume(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/imports/{id}/refused',
    operationId: 'exportContactImportRefusals',
    summary: 'The refused rows as CSV, streamed: row (as a spreadsheet numbers it, the header being 1), reason, then the row’s cells',
    description: 'A cell starting with =, +, -, @, a tab or a carriage return gets a leading apostrophe, so a spreadsheet never runs it.',
    tag: 'Contacts',
    errors: [404],
    streams: { mediaType: 'text/csv', example: REFUSED_EXAMPLE },
    async handler({ actor, params, services, res }) {
      const job = await services.contactImports.get(actor, params.id!);
      res.status(200);
      res.setHeader('content-type', 'text/csv; charset=utf-8');
      res.setHeader('content-disposition', `attachment; filename="import-${job.id}-refused.csv"`);
      try {
        for await (const text of services.contactImports.refusedCsv(actor, job.id)) {
          if (!(await write(res, text))) return;
        }
      } catch (error) {
        res.destroy();
        if (abortSignalOf(res)?.aborted) return;
        throw error;
      }
      res.end();
    },
  }),
];
