import DataLoader from 'dataloader';
import type { Actor } from '../../../common/actor.js';
import type { ContactTrigger } from '../contact-trigger.entity.js';
import type { Page } from '../../../common/pagination.js';
import type { TriggerPageArgs, TriggerService } from './trigger.service.js';

/** Per-request batches for Program.triggers: one statement per distinct (status, page, limit, cursor), whatever the number of programs. */
export class TriggerLoaders {
  private readonly byArgs = new Map<string, DataLoader<string, Page<ContactTrigger>>>();

  constructor(
    private readonly triggers: TriggerService,
    private readonly actor: Actor,
  ) {}

  forProgram(programId: string, args: TriggerPageArgs): Promise<Page<ContactTrigger>> {
    const key = `${args.status ?? ''}|${args.page}|${args.limit}|${args.cursor ?? ''}`;
    let loader = this.byArgs.get(key);
    if (!loader) {
      loader = new DataLoader(async (ids) => {
        const byProgram = await this.triggers.triggersFor(this.actor, ids, args);
        return ids.map((id) => byProgram.get(id)!);
      });
      this.byArgs.set(key, loader);
    }
    return loader.load(programId);
  }
}

declare module '../../../graphql/context.js' {
  interface GraphQLLoaders {
    triggers: TriggerLoaders;
  }
}
