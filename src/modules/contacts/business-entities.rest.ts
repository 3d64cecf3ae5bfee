import { defineRoute, ref } from '../../rest/routes.js';
import { BusinessEntityListArgs, CreateBusinessEntityInput, UpdateBusinessEntityInput } from './business-entity.inputs.js';

/** Business records ("Entities"): named records of a contact with attributes. */
export const businessEntityRoutes = [
  defineRoute({
    method: 'get',
    path: '/entities',
    operationId: 'listEntities',
    summary: 'A page of business records: {data, meta}; filter by contactId and type; search matches name or type',
    tag: 'Entities',
    query: BusinessEntityListArgs,
    response: ref('BusinessEntityPage'),
    errors: [404],
    async handler({ actor, query, services, presenter }) {
      return presenter.present('BusinessEntityPage', await services.businessEntities.list(actor, query));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/entities',
    operationId: 'createEntity',
    summary: 'Create a business record of a contact of the organization',
    tag: 'Entities',
    body: CreateBusinessEntityInput,
    status: 201,
    response: ref('BusinessEntity'),
    errors: [404],
    async handler({ actor, body, services, presenter }) {
      return presenter.present('BusinessEntity', await services.businessEntities.create(actor, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/entities/{id}',
    operationId: 'getEntity',
    summary: 'Read a business record',
    tag: 'Entities',
    response: ref('BusinessEntity'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('BusinessEntity', await services.businessEntities.get(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/entities/{id}',
    operationId: 'updateEntity',
    summary: 'Change the fields that are sent; the others keep their values',
    tag: 'Entities',
    body: UpdateBusinessEntityInput,
    response: ref('BusinessEntity'),
    errors: [404],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('BusinessEntity', await services.businessEntities.update(actor, params.id!, body));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/entities/{id}',
    operationId: 'deleteEntity',
    summary: 'Delete a business record',
    tag: 'Entities',
    status: 204,
    errors: [404],
    async handler({ actor, params, services }) {
      await services.businessEntities.delete(actor, params.id!);
    },
  }),
];
