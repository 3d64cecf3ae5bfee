import { createPageType } from '../../common/pagination.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';

export const WebhookEndpointPage = createPageType(WebhookEndpoint, 'WebhookEndpointPage');
export const WebhookDeliveryPage = createPageType(WebhookDelivery, 'WebhookDeliveryPage');
