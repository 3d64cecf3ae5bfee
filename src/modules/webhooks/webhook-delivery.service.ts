import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { pageMeta, type CursorPageArgs, type Page } from '../../common/pagination.js';
import { fixedOrderPage } from '../../db/keyset.js';
import { readList } from '../../db/read-model.js';
import { isUuid } from '../../db/base.entity.js';
import { pagesByParent } from '../../db/pages-by-parent.js';
import { Event } from '../events/event.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { authorize } from '../organizations/roles.js';
import { query } from '../../db/sql.js';
import { WebhookDelivery, WebhookDeliveryAttempt } from './webhook-delivery.entity.js';
import type { WebhookEndpoint } from './webhook-endpoint.entity.js';
import type { WebhookEndpointService } from './webhook-endpoint.service.js';
import type { CreateWebhookDeliveryInput } from './webhook.inputs.js';

/** The type of the event POST /api/webhook-endpoints/{id}/test sends; it is not in the event stream. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** An endpoint's deliveries (newest first, each with its attempts), re-sends on demand and test events. */
export class WebhookDeliveryService {
  constructor(
    private readonly em: EntityManager,
    private readonly endpoints: WebhookEndpointService,
  ) {}

  /** A page of the endpoint's deliveries, newest first, each with every attempt; by page or cursor. */
  async list(actor: Actor, endpointId: string, args: CursorPageArgs): Promise<Page<WebhookDelivery>> {
    const endpoint = await this.endpoints.get(actor, endpointId);
    return this.endpointPage(actor, endpoint.id, args);
  }

  /** One endpoint's page by its keyset on (endpoint_id, created_at, id), its cursors written; withAttempts sets each delivery's attempts. */
  private async endpointPage(actor: Actor, endpointId: string, args: CursorPageArgs): Promise<Page<WebhookDelivery>> {
    const page = await readList(this.em, {
      entity: WebhookDelivery,
      where: { endpoint: endpointId, organization: actor.organizationId },
      options: fixedOrderPage<WebhookDelivery>(args, 'createdAt', 'desc'),
      page: args.page,
      limit: args.limit,
    });
    await this.withAttempts(page.data);
    return page;
  }

  /** One page of deliveries per endpoint, in two statements however many endpoints (WebhookEndpoint.deliveries); a cursor's by its keyset. */
  async pagesFor(actor: Actor, endpointIds: readonly string[], args: CursorPageArgs): Promise<Map<string, Page<WebhookDelivery>>> {
    if (args.cursor) {
      // A cursor belongs to one endpoint's list: each endpoint's page by its keyset.
      const ids = endpointIds.filter(isUuid);
      const read = new Map(await Promise.all(ids.map(async (id) => [id, await this.endpointPage(actor, id, args)] as const)));
      return new Map(endpointIds.map((id) => [id, read.get(id) ?? { data: [], meta: pageMeta(args.page, args.limit, 0) }]));
    }
    const pages = await pagesByParent(this.em, endpointIds, {
      entity: WebhookDelivery,
      table: 'webhook_deliveries',
      parentColumn: 'endpoint_id',
      columns: '*',
      orderBy: 'created_at desc, id desc',
      organizationId: actor.organizationId,
      page: args.page,
      limit: args.limit,
      keyset: { field: 'createdAt', order: 'desc' },
    });
    await this.withAttempts([...pages.values()].flatMap((page) => page.data));
    return pages;
  }

  /** Sends an event of the organization to the endpoint again, as a delivery of its own (same webhook-id: the event's). */
  async resend(actor: Actor, endpointId: string, input: CreateWebhookDeliveryInput): Promise<WebhookDelivery> {
    authorize(actor, 'webhooks.manage');
    const endpoint = await this.enabledEndpoint(actor, endpointId);
    const event = await this.em.findOne(Event, { id: input.eventId, organization: actor.organizationId });
    if (!event) throw AppError.notFound('Event');
    return this.enqueue(endpoint, { eventId: event.id, messageId: event.id, eventType: event.type, eventCreatedAt: event.createdAt, payload: null });
  }

  /** Sends a `webhook.test` event to this endpoint only; it is not written to the event stream. */
  async sendTest(actor: Actor, endpointId: string): Promise<WebhookDelivery> {
    authorize(actor, 'webhooks.manage');
    const endpoint = await this.enabledEndpoint(actor, endpointId);
    const now = new Date();
    const payload = { endpointId: endpoint.id, message: 'A test event sent on request; it is not in the event stream' };
    return this.enqueue(endpoint, { eventId: null, messageId: randomUUID(), eventType: TEST_EVENT_TYPE, eventCreatedAt: now, payload });
  }

  private async enabledEndpoint(actor: Actor, endpointId: string): Promise<WebhookEndpoint> {
    const endpoint = await this.endpoints.get(actor, endpointId);
    if (!endpoint.enabled) throw new AppError('CONFLICT', 'The endpoint is disabled: enable it (enabled: true) before sending to it');
    return endpoint;
  }

  private async enqueue(
    endpoint: WebhookEndpoint,
    what: { eventId: string | null; messageId: string; eventType: string; eventCreatedAt: Date; payload: Record<string, unknown> | null },
  ): Promise<WebhookDelivery> {
    const now = new Date();
    const delivery = this.em.create(WebhookDelivery, {
      organization: this.em.getReference(Organization, endpoint.organization.id),
      endpoint,
      ...what,
      manual: true,
      nextAttemptAt: now,
    });
    await this.em.flush();
    delivery.attempts = [];
    return delivery;
  }

  /** Reads the attempts of the deliveries (one statement) onto each. */
  private async withAttempts(deliveries: WebhookDelivery[]): Promise<void> {
    const ids = deliveries.map((delivery) => delivery.id).filter(isUuid);
    const byDelivery = new Map<string, WebhookDeliveryAttempt[]>(ids.map((id) => [id, []]));
    if (ids.length > 0) {
      const rows = await query<{
        delivery_id: string;
        attempt: number;
        attempted_at: Date | string;
        status_code: number | null;
        latency_ms: number;
        error: string | null;
      }>(
        this.em,
        `select delivery_id, attempt, attempted_at, status_code, latency_ms, error from webhook_delivery_attempts where delivery_id in (${ids.map(() => '?').join(', ')}) order by delivery_id, attempt`,
        ids,
      );
      for (const row of rows) {
        byDelivery.get(row.delivery_id)?.push({
          attempt: row.attempt,
          attemptedAt: new Date(row.attempted_at),
          statusCode: row.status_code,
          latencyMs: row.latency_ms,
          error: row.error,
        });
      }
    }
    for (const delivery of deliveries) delivery.attempts = byDelivery.get(delivery.id) ?? [];
  }
}
