import { DoNotCallEntry } from './do-not-call.entity.js';
import { PageArgs } from '../../common/pagination.js';
import { routesUsing } from '../../rest/routes.js';
import { ref } from '../../rest/json-schema.js';
import { AddDoNotCallInput, ImportDoNotCallInput } from './do-not-call.inputs.js';
import type { DoNotCallService } from './do-not-call.service.js';

/** The services this route table calls. */
export type RouteServices = { doNotCall: DoNotCallService };
const defineRoute = routesUsing<RouteServices>();

/** The do-not-call list: `{id}` is an entry's id or its E.164 number (`+` may be sent as is or as %2B). */
export const doNotCallRoutes = [
  defineRoute({
    method: 'get',
    path: '/do-not-call',
    operationId: 'listDoNotCallEntries',
    summary: 'A page of the do-not-call list: {data, meta}; search matches the number or the note; sortBy createdAt or phone',
    tag: 'Do not call',
    query: PageArgs,
    response: ref('DoNotCallPage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.listAnswer('DoNotCallPage', DoNotCallEntry, {
        json: (row) => services.doNotCall.listJson(actor, query, row),
        rows: () => services.doNotCall.list(actor, query),
      });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/do-not-call',
    operationId: 'addDoNotCall',
    summary: 'Put a number on the do-not-call list (source manual); a number already on it → 409',
    description:
      'From then on every dial of the organization checks it at the moment the call is placed: campaigns, live triggers and retries skip the number, spend no credit and count the contact as do_not_call.',
    tag: 'Do not call',
    body: AddDoNotCallInput,
    status: 201,
    response: ref('DoNotCallEntry'),
    errors: [409],
    async handler({ actor, body, services, presenter }) {
      return presenter.present('DoNotCallEntry', await services.doNotCall.add(actor, body));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/do-not-call/import',
    operationId: 'importDoNotCall',
    summary: 'Add the numbers of a CSV (source import): the good rows are added, bad rows are reported with their line and reason, repeats are merged',
    description:
      'The body is `{"csv": "<text>"}`. A first line naming a `phone` (or `number`) column is a header (its `note` column is kept); without one the first column is the number, the second the note. ' +
      'Blank lines are skipped. The answer lists `rejected` rows (not E.164, no number, an unclosed quote) and `skipped` rows (a number repeated in the file, or already on the list: merged into the entry that is there). ' +
      'A file of more than 10000 rows → 400 naming csv, nothing added. ' +
      'The rows are added 1000 per transaction, so other requests are served meanwhile; an import that fails partway keeps what it added (sent again, those rows are skipped as already listed). ' +
      'One import (of contacts or of the do-not-call list) per organization at a time: another sent while one runs → 409 naming the running one.',
    tag: 'Do not call',
    body: ImportDoNotCallInput,
    response: ref('DoNotCallImportResult'),
    errors: [409, 413],
    async handler({ actor, body, services, presenter }) {
      return presenter.present('DoNotCallImportResult', await services.doNotCall.import(actor, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/do-not-call/{id}',
    operationId: 'getDoNotCallEntry',
    summary: 'An entry by its id or its number (E.164); one not on the list → 404',
    tag: 'Do not call',
    response: ref('DoNotCallEntry'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('DoNotCallEntry', await services.doNotCall.get(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/do-not-call/{id}',
    operationId: 'removeDoNotCall',
    summary: 'Take a number off the list by the entry’s id or the number (it may be called again); one not on the list → 404',
    tag: 'Do not call',
    status: 204,
    errors: [404],
    async handler({ actor, params, services }) {
      await services.doNotCall.remove(actor, params.id!);
    },
  }),
];
