import { Contact } from './contact.entity.js';
import { PageArgs } from '../../common/pagination.js';
import { routesUsing } from '../../rest/routes.js';
import { objectOf, ref } from '../../rest/json-schema.js';
import { AudienceMembersInput, CreateAudienceInput, SegmentPreviewInput, UpdateAudienceInput } from './audience.inputs.js';
import { CreateContactInput, ImportContactsInput, UpdateContactInput } from './contact.inputs.js';
import type { AudienceService } from './audience.service.js';
import type { ContactService } from './contact.service.js';

/** The services this route table calls. */
export type RouteServices = { audiences: AudienceService; contacts: ContactService };
const defineRoute = routesUsing<RouteServices>();

/** Endpoint 10 of the interface (the audience list) and the Audiences/Contacts operations around it. */
export const contactRoutes = [
  defineRoute({
    method: 'get',
    path: '/audience',
    operationId: 'listAudiences',
    summary: 'A page of audiences: {data, meta}; search matches name or description',
    tag: 'Audiences',
    query: PageArgs,
    response: ref('AudiencePage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.present('AudiencePage', await services.audiences.list(actor, query));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/audience',
    operationId: 'createAudience',
    summary: 'Create an audience',
    tag: 'Audiences',
    body: CreateAudienceInput,
    status: 201,
    response: ref('Audience'),
    async handler({ actor, body, services, presenter }) {
      return presenter.present('Audience', await services.audiences.create(actor, body));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/audience/preview',
    operationId: 'getSegmentPreview',
    summary: 'Count the contacts a segment filter matches now, without saving it: {contactCount}',
    description:
      'The same validation as a segment’s filter (a bad filter → the same 400 naming its place) and the same count as a saved segment’s contactCount; only the organization’s contacts are counted. Nothing is written.',
    tag: 'Audiences',
    body: SegmentPreviewInput,
    response: ref('SegmentPreview'),
    async handler({ actor, body, services, presenter }) {
      return presenter.present('SegmentPreview', await services.audiences.previewSegment(actor, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/audience/{id}',
    operationId: 'getAudience',
    summary: 'Read an audience',
    tag: 'Audiences',
    response: ref('Audience'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('Audience', await services.audiences.get(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/audience/{id}',
    operationId: 'updateAudience',
    summary: 'Change the fields that are sent; the others keep their values',
    tag: 'Audiences',
    body: UpdateAudienceInput,
    response: ref('Audience'),
    errors: [404, 409],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('Audience', await services.audiences.update(actor, params.id!, body));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/audience/{id}',
    operationId: 'deleteAudience',
    summary: 'Delete an audience and its memberships (the contacts stay)',
    tag: 'Audiences',
    status: 204,
    errors: [404],
    async handler({ actor, params, services }) {
      await services.audiences.delete(actor, params.id!);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/audience/{audienceId}/members',
    operationId: 'listAudienceMembers',
    summary: 'A page of the audience’s members: {data, meta}, as GraphQL’s Audience.contacts; search matches name or phone',
    tag: 'Audiences',
    query: PageArgs,
    response: ref('ContactPage'),
    errors: [404],
    async handler({ actor, params, query, services, presenter }) {
      return presenter.listAnswer('ContactPage', Contact, {
        json: (row) => services.audiences.membersJson(actor, params.audienceId!, query, row),
        rows: () => services.audiences.members(actor, params.audienceId!, query),
      });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/audience/{audienceId}/members',
    operationId: 'addAudienceMembers',
    summary: 'Add contacts of the organization to a static audience; answers the audience (a dynamic audience → 409)',
    tag: 'Audiences',
    body: AudienceMembersInput,
    response: ref('Audience'),
    errors: [404, 409],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('Audience', await services.audiences.addMembers(actor, params.audienceId!, body));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/audience/{audienceId}/members',
    operationId: 'removeAudienceMembers',
    summary: 'Remove contacts from a static audience; 204 with no body (a dynamic audience → 409)',
    tag: 'Audiences',
    body: AudienceMembersInput,
    status: 204,
    errors: [404, 409],
    async handler({ actor, params, body, services }) {
      await services.audiences.removeMembers(actor, params.audienceId!, body);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/contacts',
    operationId: 'createContact',
    summary: 'Create a contact; a phone already in the organization → 409',
    tag: 'Contacts',
    body: CreateContactInput,
    status: 201,
    response: ref('Contact'),
    errors: [409],
    async handler({ actor, body, services, presenter }) {
      return presenter.present('Contact', await services.contacts.create(actor, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/contacts',
    operationId: 'listContacts',
    summary: 'A page of contacts: {data, meta}; search matches name or phone',
    tag: 'Contacts',
    query: PageArgs,
    response: ref('ContactPage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.listAnswer('ContactPage', Contact, {
        json: (row) => services.contacts.listJson(actor, query, row),
        rows: () => services.contacts.list(actor, query),
      });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/contacts/import',
    operationId: 'importContacts',
    summary: 'Write 1 to 10000 contacts all together; any bad row → 400 naming contacts.<i>.<field>, nothing written',
    description:
      'A phone already in the organization → 409 naming its rows, nothing written. The file is written 1000 rows per transaction, so other requests are served meanwhile; ' +
      'if a part fails, what was written is deleted before the answer (and after a crash, at the next start). ' +
      'One import (of contacts or of the do-not-call list) per organization at a time: another sent while one runs → 409 naming the running one.',
    tag: 'Contacts',
    body: ImportContactsInput,
    status: 201,
    response: objectOf({ imported: { type: 'integer' } }),
    errors: [409, 413],
    async handler({ actor, body, services, presenter }) {
      return presenter.present('ImportContactsResult', await services.contacts.import(actor, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/contacts/{id}',
    operationId: 'getContact',
    summary: 'Read a contact',
    tag: 'Contacts',
    response: ref('Contact'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('Contact', await services.contacts.get(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/contacts/{id}',
    operationId: 'updateContact',
    summary: 'Change the fields that are sent; the others keep their values',
    tag: 'Contacts',
    body: UpdateContactInput,
    response: ref('Contact'),
    errors: [404, 409],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('Contact', await services.contacts.update(actor, params.id!, body));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/contacts/{id}',
    operationId: 'deleteContact',
    summary: 'Delete a contact and its audience memberships',
    tag: 'Contacts',
    status: 204,
    errors: [404],
    async handler({ actor, params, services }) {
      await services.contacts.delete(actor, params.id!);
    },
  }),
];
