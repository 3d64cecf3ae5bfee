import DataLoader from 'dataloader';
import type { Actor } from '../../common/actor.js';
import type { BusinessEntity } from './business-entity.entity.js';
import type { BusinessEntityService } from './business-entity.service.js';

/** Per-request batches for Contact.entities: one statement per distinct `type` argument, however many contacts. */
export class ContactLoaders {
  private readonly entityLoaders = new Map<string, DataLoader<string, BusinessEntity[]>>();

  constructor(
    private readonly businessEntities: BusinessEntityService,
    private readonly actor: Actor,
  ) {}

  entities(contactId: string, type: string | null | undefined): Promise<BusinessEntity[]> {
    const key = type ?? '';
    let loader = this.entityLoaders.get(key);
    if (!loader) {
      loader = new DataLoader(async (ids) => {
        const byContact = await this.businessEntities.entitiesOf(this.actor, ids, type ?? undefined);
        return ids.map((id) => byContact.get(id) ?? []);
      });
      this.entityLoaders.set(key, loader);
    }
    return loader.load(contactId);
  }
}

declare module '../../graphql/context.js' {
  interface GraphQLLoaders {
    contacts: ContactLoaders;
  }
}
