import DataLoader from 'dataloader';
import type { Actor } from '../../../common/actor.js';
import type { ContactTrigger } from '../contact-trigger.entity.js';
import type { TriggerStatus } from '../program.enums.js';
import type { TriggerService } from './trigger.service.js';

/** Per-request batches for Program.triggers: one statement per distinct status filter, whatever the number of programs. */
export class TriggerLoaders {
  private readonly byStatus = new Map<string, DataLoader<string, ContactTrigger[]>>();

  constructor(
    private readonly triggers: TriggerService,
    private readonly actor: Actor,
  ) {}

  forProgram(programId: string, status?: TriggerStatus | null): Promise<ContactTrigger[]> {
    const key = status ?? '';
    let loader = this.byStatus.get(key);
    if (!loader) {
      loader = new DataLoader(async (ids) => {
        const byProgram = await this.triggers.triggersFor(this.actor, ids, status);
        return ids.map((id) => byProgram.get(id) ?? []);
      });
      this.byStatus.set(key, loader);
    }
    return loader.load(programId);
  }
}

declare module '../../../graphql/context.js' {
  interface GraphQLLoaders {
    triggers: TriggerLoaders;
  }
}
