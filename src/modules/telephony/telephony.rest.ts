import { CarrierConnection } from './carrier-connection.entity.js';
import type { Actor } from '../../common/actor.js';
import { PageArgs } from '../../common/pagination.js';
import { routesUsing } from '../../rest/routes.js';
import { arrayOf, ref } from '../../rest/json-schema.js';
import type { PhoneNumber } from './phone-number.entity.js';
import { CreateCarrierConnectionInput, CreatePhoneNumberInput, UpdateCarrierConnectionInput, UpdatePhoneNumberInput } from './telephony.inputs.js';
import type { CarrierConnectionService } from './carrier-connection.service.js';
import type { PhoneNumberService } from './phone-number.service.js';
import { DeleteCarrierConnectionArgs } from './carrier-connection.args.js';

/** The services this route table calls. */
export type RouteServices = { carrierConnections: CarrierConnectionService; phoneNumbers: PhoneNumberService };
const defineRoute = routesUsing<RouteServices>();

/** Loads the numbers' connections (one statement), so the REST body shows each inline as GraphQL does. */
async function showConnections(services: RouteServices, actor: Actor, numbers: PhoneNumber[]): Promise<PhoneNumber[]> {
  const ids = [...new Set(numbers.flatMap((number) => (number.carrierConnection ? [number.carrierConnection.id] : [])))];
  const connections = await services.carrierConnections.connectionsFor(actor, ids);
  for (const number of numbers) if (number.carrierConnection) number.carrierConnection = connections.get(number.carrierConnection.id) ?? null;
  return numbers;
}

/** Carrier connections: the auth token is write-only (only authTokenLast4 is shown). */
export const carrierConnectionRoutes = [
  defineRoute({
    method: 'get',
    path: '/carriers',
    operationId: 'listCarriers',
    summary: 'The carriers a connection can be made to: each one’s kind, label and the fields its connections take (a JSON array, by kind)',
    tag: 'Telephony',
    response: arrayOf(ref('Carrier')),
    handler({ services, presenter }) {
      return Promise.resolve(services.carrierConnections.carriers().map((carrier) => presenter.present('Carrier', carrier)));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/carrier-connections',
    operationId: 'listCarrierConnections',
    summary: 'A page of carrier connections: {data, meta}; search matches the name',
    tag: 'Telephony',
    query: PageArgs,
    response: ref('CarrierConnectionPage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.listAnswer('CarrierConnectionPage', CarrierConnection, {
        json: (row) => services.carrierConnections.listJson(actor, query, row),
        rows: () => services.carrierConnections.list(actor, query),
      });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/carrier-connections',
    operationId: 'createCarrierConnection',
    summary: 'Connect a carrier account; the carrier checks the credentials first (rejected → 400, unreachable → 503); needs CREDENTIALS_KEY (409 otherwise)',
    tag: 'Telephony',
    body: CreateCarrierConnectionInput,
    status: 201,
    response: ref('CarrierConnection'),
    errors: [403, 409, 503],
    async handler({ actor, body, services, presenter }) {
      return presenter.present('CarrierConnection', await services.carrierConnections.create(actor, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/carrier-connections/{id}',
    operationId: 'getCarrierConnection',
    summary: 'Read a carrier connection (never its auth token)',
    tag: 'Telephony',
    response: ref('CarrierConnection'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('CarrierConnection', await services.carrierConnections.get(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/carrier-connections/{id}',
    operationId: 'updateCarrierConnection',
    summary: 'Change the fields that are sent; a new authToken (rotation) is checked with the carrier first',
    tag: 'Telephony',
    body: UpdateCarrierConnectionInput,
    response: ref('CarrierConnection'),
    errors: [403, 404, 409, 503],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('CarrierConnection', await services.carrierConnections.update(actor, params.id!, body));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/carrier-connections/{id}',
    operationId: 'deleteCarrierConnection',
    summary: 'Delete a carrier connection; its numbers stay, without a connection',
    description:
      'Recordings made through the connection that the carrier still keeps (completed and not deleted, or in progress) would be stranded: neither downloadable nor deletable through the gateway, by a user or by retention. ' +
      'Such a delete answers 409 naming them and changes nothing, unless keepRecordings=true says to leave them at the carrier.',
    tag: 'Telephony',
    query: DeleteCarrierConnectionArgs,
    status: 204,
    errors: [403, 404, 409],
    async handler({ actor, params, query, services }) {
      await services.carrierConnections.delete(actor, params.id!, query);
    },
  }),
];

/** Phone numbers: E.164, unique in the organization, the caller IDs of programs. */
export const phoneNumberRoutes = [
  defineRoute({
    method: 'get',
    path: '/phone-numbers',
    operationId: 'listPhoneNumbers',
    summary: 'A page of phone numbers with their carrier connection: {data, meta}; search matches the number or the label',
    tag: 'Telephony',
    query: PageArgs,
    response: ref('PhoneNumberPage'),
    async handler({ actor, query, services, presenter }) {
      const page = await services.phoneNumbers.list(actor, query);
      await showConnections(services, actor, page.data);
      return presenter.present('PhoneNumberPage', page);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/phone-numbers',
    operationId: 'createPhoneNumber',
    summary: 'Add a number (E.164); a number already in the organization → 409, a carrierConnectionId not of it → 404',
    tag: 'Telephony',
    body: CreatePhoneNumberInput,
    status: 201,
    response: ref('PhoneNumber'),
    errors: [403, 404, 409],
    async handler({ actor, body, services, presenter }) {
      const [number] = await showConnections(services, actor, [await services.phoneNumbers.create(actor, body)]);
      return presenter.present('PhoneNumber', number);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/phone-numbers/{id}',
    operationId: 'getPhoneNumber',
    summary: 'Read a phone number with its carrier connection',
    tag: 'Telephony',
    response: ref('PhoneNumber'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      const [number] = await showConnections(services, actor, [await services.phoneNumbers.get(actor, params.id!)]);
      return presenter.present('PhoneNumber', number);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/phone-numbers/{id}',
    operationId: 'updatePhoneNumber',
    summary: 'Change the fields that are sent; null clears label and carrierConnectionId',
    tag: 'Telephony',
    body: UpdatePhoneNumberInput,
    response: ref('PhoneNumber'),
    errors: [403, 404, 409],
    async handler({ actor, params, body, services, presenter }) {
      const [number] = await showConnections(services, actor, [await services.phoneNumbers.update(actor, params.id!, body)]);
      return presenter.present('PhoneNumber', number);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/phone-numbers/{id}',
    operationId: 'deletePhoneNumber',
    summary: 'Delete a phone number; programs that used it as caller ID lose it',
    tag: 'Telephony',
    status: 204,
    errors: [403, 404],
    async handler({ actor, params, services }) {
      await services.phoneNumbers.delete(actor, params.id!);
    },
  }),
];
