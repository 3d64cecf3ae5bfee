import DataLoader from 'dataloader';
import type { Actor } from '../../common/actor.js';
import type { Agent } from '../agents/agent.entity.js';
import type { Audience } from '../contacts/audience.entity.js';
import type { Services } from '../../services.js';
import type { CallFlow } from './call-flow.entity.js';
import type { Execution } from './execution.entity.js';
import type { Program } from './program.entity.js';

/** Loads by id through `load`, answering null for ids that are gone (a relation set null later). */
function byId<T>(load: (ids: readonly string[]) => Promise<Map<string, T>>): DataLoader<string, T | null> {
  return new DataLoader(async (ids) => {
    const found = await load(ids);
    return ids.map((id) => found.get(id) ?? null);
  });
}

/** Per-request batches for the relations of Program and Execution: one statement per relation, not per row. */
export class ProgramLoaders {
  readonly flows: DataLoader<string, CallFlow | null>;
  readonly agents: DataLoader<string, Agent | null>;
  readonly audiences: DataLoader<string, Audience | null>;
  readonly programs: DataLoader<string, Program | null>;
  readonly executions: DataLoader<string, Execution[]>;

  constructor(services: Services, actor: Actor) {
    this.flows = byId((ids) => services.callFlows.flowsFor(actor, ids));
    this.agents = byId((ids) => services.conversations.agentsFor(actor, ids));
    this.audiences = byId((ids) => services.executions.audiencesFor(actor, ids));
    this.programs = byId((ids) => services.executions.programsFor(actor, ids));
    this.executions = new DataLoader(async (ids) => {
      const byProgram = await services.executions.forPrograms(actor, ids);
      return ids.map((id) => byProgram.get(id) ?? []);
    });
  }
}

declare module '../../graphql/context.js' {
  interface GraphQLLoaders {
    programs: ProgramLoaders;
  }
}
