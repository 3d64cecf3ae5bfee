import { defineRoute, ref } from '../../rest/routes.js';
import { AddCreditsInput, UpdateOrganizationInput } from './organization.inputs.js';

/** The caller's organization and its credits. */
export const organizationRoutes = [
  defineRoute({
    method: 'get',
    path: '/organization',
    operationId: 'getOrganization',
    summary: "The caller's organization with its credit balance",
    tag: 'Organization',
    response: ref('Organization'),
    async handler({ actor, services, presenter }) {
      return presenter.present('Organization', await services.organizations.get(actor));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/organization',
    operationId: 'updateOrganization',
    summary: 'Rename the organization; owner or admin only',
    tag: 'Organization',
    body: UpdateOrganizationInput,
    response: ref('Organization'),
    errors: [403],
    async handler({ actor, body, services, presenter }) {
      return presenter.present('Organization', await services.organizations.update(actor, body));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/organization/credits',
    operationId: 'addCredits',
    summary: 'Add 1 to 1000000 credits; owner or admin only; answers the organization',
    tag: 'Organization',
    body: AddCreditsInput,
    response: ref('Organization'),
    errors: [403, 409],
    async handler({ actor, body, services, presenter }) {
      return presenter.present('Organization', await services.organizations.addCredits(actor, body));
    },
  }),
];
