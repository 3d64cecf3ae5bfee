import { CreditLedgerEntry } from './credit-ledger.entity.js';
import { routesUsing } from '../../rest/routes.js';
import { ref } from '../../rest/json-schema.js';
import { CreditLedgerArgs, UpdateOrganizationInput } from './organization.inputs.js';
import type { CreditService } from './credit.service.js';
import type { OrganizationService } from './organization.service.js';

/** The services this route table calls. */
export type RouteServices = { credits: CreditService; organizations: OrganizationService };
const defineRoute = routesUsing<RouteServices>();

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
    summary: 'Change the organization (its name, its recordingRetentionDays): the fields sent; owner only',
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
    summary: 'Gone: always 403 FORBIDDEN; credits are granted by the operator (npm run cli -- credits:add)',
    tag: 'Organization',
    response: ref('Organization'),
    errors: [403],
    async handler({ actor, services }) {
      return services.organizations.addCredits(actor);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/organization/credit-ledger',
    operationId: 'listCreditLedger',
    summary: 'A page of the organization’s credit movements, newest first: operator grants and campaign spends, {data, meta}',
    tag: 'Organization',
    query: CreditLedgerArgs,
    response: ref('CreditLedgerPage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.listAnswer('CreditLedgerPage', CreditLedgerEntry, {
        json: (row) => services.credits.ledgerJson(actor, query, row),
        rows: () => services.credits.ledger(actor, query),
      });
    },
  }),
];
