import DataLoader from 'dataloader';
import type { Actor } from '../../common/actor.js';
import type { CursorPageArgs, Page } from '../../common/pagination.js';
import type { WebhookDelivery } from './webhook-delivery.entity.js';
import type { WebhookDeliveryService } from './webhook-delivery.service.js';

/** Per-request batches for WebhookEndpoint.deliveries: two statements per page arguments, however many endpoints. */
export class WebhookLoaders {
  private readonly pages = new Map<string, DataLoader<string, Page<WebhookDelivery>>>();

  constructor(
    private readonly deliveries: WebhookDeliveryService,
    private readonly actor: Actor,
  ) {}

  deliveryPage(endpointId: string, args: CursorPageArgs): Promise<Page<WebhookDelivery>> {
    const key = JSON.stringify([args.page, args.limit, args.cursor ?? null]);
    let loader = this.pages.get(key);
    if (!loader) {
      loader = new DataLoader(async (ids) => {
        const pages = await this.deliveries.pagesFor(this.actor, ids, args);
        return ids.map((id) => pages.get(id)!);
      });
      this.pages.set(key, loader);
    }
    return loader.load(endpointId);
  }
}

declare module '../../graphql/context.js' {
  interface GraphQLLoaders {
    webhooks: WebhookLoaders;
  }
}
