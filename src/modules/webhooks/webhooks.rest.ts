import { CursorPageArgs, PageArgs } from '../../common/pagination.js';
import { routesUsing } from '../../rest/routes.js';
import { ref } from '../../rest/json-schema.js';
import { CreateWebhookDeliveryInput, CreateWebhookEndpointInput, UpdateWebhookEndpointInput } from './webhook.inputs.js';
import type { WebhookDeliveryService } from './webhook-delivery.service.js';
import type { WebhookEndpointService } from './webhook-endpoint.service.js';

/** The services this route table calls. */
export type RouteServices = { webhookDeliveries: WebhookDeliveryService; webhookEndpoints: WebhookEndpointService };
const defineRoute = routesUsing<RouteServices>();

const SIGNING =
  'Deliveries follow Standard Webhooks: POST with headers webhook-id (the event id), webhook-timestamp and webhook-signature (v1,<base64 HMAC-SHA256>; two during the 24 h after a rotation), body {type, timestamp, data}.';

/** Webhook endpoints: the signing secret is shown only by create and rotate-secret. */
export const webhookRoutes = [
  defineRoute({
    method: 'get',
    path: '/webhook-endpoints',
    operationId: 'listWebhookEndpoints',
    summary: 'A page of webhook endpoints: {data, meta}; search matches the URL or the description',
    description: 'sortBy is createdAt, updatedAt or url. Secrets are never shown, only secretHint (their last 4 characters).',
    tag: 'Webhooks',
    query: PageArgs,
    response: ref('WebhookEndpointPage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.present('WebhookEndpointPage', await services.webhookEndpoints.list(actor, query));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webhook-endpoints',
    operationId: 'createWebhookEndpoint',
    summary: 'Add a webhook endpoint; the answer holds its signing secret (whsec_…), shown only here',
    description:
      `${SIGNING} The URL must be https and resolve only to public addresses (400 otherwise; http and private addresses only with WEBHOOK_ALLOW_PRIVATE=true). ` +
      'eventTypes lists the types to deliver (empty or left out: every type; an unknown type is 400). Needs CREDENTIALS_KEY (409 otherwise); an organization holds at most 20 endpoints (409 past that).',
    tag: 'Webhooks',
    body: CreateWebhookEndpointInput,
    status: 201,
    response: ref('WebhookEndpointWithSecret'),
    errors: [403, 409],
    async handler({ actor, body, services, presenter }) {
      return presenter.present('WebhookEndpointWithSecret', await services.webhookEndpoints.create(actor, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/webhook-endpoints/{id}',
    operationId: 'getWebhookEndpoint',
    summary: 'Read a webhook endpoint (never its secret)',
    tag: 'Webhooks',
    response: ref('WebhookEndpoint'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('WebhookEndpoint', await services.webhookEndpoints.get(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/webhook-endpoints/{id}',
    operationId: 'updateWebhookEndpoint',
    summary: 'Change the fields that are sent; enabled: false fails the pending deliveries, enabled: true clears disabledReason',
    tag: 'Webhooks',
    body: UpdateWebhookEndpointInput,
    response: ref('WebhookEndpoint'),
    errors: [403, 404],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('WebhookEndpoint', await services.webhookEndpoints.update(actor, params.id!, body));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/webhook-endpoints/{id}',
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete a webhook endpoint and its deliveries',
    tag: 'Webhooks',
    status: 204,
    errors: [403, 404],
    async handler({ actor, params, services }) {
      await services.webhookEndpoints.delete(actor, params.id!);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webhook-endpoints/{id}/rotate-secret',
    operationId: 'rotateWebhookEndpointSecret',
    summary: 'A new signing secret, shown only in this answer; the old one keeps signing alongside it for 24 hours',
    tag: 'Webhooks',
    response: ref('WebhookEndpointWithSecret'),
    errors: [403, 404, 409],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('WebhookEndpointWithSecret', await services.webhookEndpoints.rotateSecret(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/webhook-endpoints/{id}/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'A page of the endpoint’s deliveries, newest first, each with its attempts (status code, latency, error): {data, meta}',
    tag: 'Webhooks',
    query: CursorPageArgs,
    response: ref('WebhookDeliveryPage'),
    errors: [404],
    async handler({ actor, params, query, services, presenter }) {
      return presenter.present('WebhookDeliveryPage', await services.webhookDeliveries.list(actor, params.id!, query));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webhook-endpoints/{id}/deliveries',
    operationId: 'createWebhookDelivery',
    summary: 'Send an event of the organization to the endpoint again, now (a new delivery; webhook-id stays the event id)',
    description: 'eventId names an event of the organization (404 otherwise). A disabled endpoint answers 409.',
    tag: 'Webhooks',
    body: CreateWebhookDeliveryInput,
    status: 201,
    response: ref('WebhookDelivery'),
    errors: [403, 404, 409],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('WebhookDelivery', await services.webhookDeliveries.resend(actor, params.id!, body));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webhook-endpoints/{id}/test',
    operationId: 'testWebhookEndpoint',
    summary: 'Send a webhook.test event to this endpoint (a new delivery); it is not in the event stream nor sent to other endpoints',
    description: 'A disabled endpoint answers 409.',
    tag: 'Webhooks',
    status: 201,
    response: ref('WebhookDelivery'),
    errors: [403, 404, 409],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('WebhookDelivery', await services.webhookDeliveries.sendTest(actor, params.id!));
    },
  }),
];
