import { BusinessEntity } from './business-entity.entity.js';
import { routesUsing } from '../../rest/routes.js';
import { ref } from '../../rest/json-schema.js';
import { BusinessEntityListArgs, CreateBusinessEntityInput, UpdateBusinessEntityInput } from './business-entity.inputs.js';
import type { BusinessEntityService } from './business-entity.service.js';

/** The services this route table calls. */
export type RouteServices = { businessEntities: BusinessEntityService };
const defineRoute = routesUsing<RouteServices>();

/** Business records ("Entities"): named records of a contact with attributes. */
export const businessEntityRoutes = [
  defineRoute({
    method: 'get',
    path: '/business-entities',
    operationId: 'listBusinessEntities',
    summary: 'A page of business records: {data, meta}; filter by contactId and type; search matches name or type',
    tag: 'Entities',
    query: BusinessEntityListArgs,
    response: ref('BusinessEntityPage'),
    errors: [404],
    async handler({ actor, query, services, presenter }) {
      return presenter.listAnswer('BusinessEntityPage', BusinessEntity, {
        json: (row) => services.businessEntities.listJson(actor, query, row),
        rows: () => services.businessEntities.list(actor, query),
      });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/business-entities',
    operationId: 'createBusinessEntity',
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
    path: '/business-entities/{id}',
    operationId: 'getBusinessEntity',
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
    path: '/business-entities/{id}',
    operationId: 'updateBusinessEntity',
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
    path: '/business-entities/{id}',
    operationId: 'deleteBusinessEntity',
    summary: 'Delete a business record',
    tag: 'Entities',
    status: 204,
    errors: [404],
    async handler({ actor, params, services }) {
      await services.businessEntities.delete(actor, params.id!);
    },
  }),
];
