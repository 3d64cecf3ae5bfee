import DataLoader from 'dataloader';
import type { Actor } from '../../common/actor.js';
import type { Agent } from '../agents/agent.entity.js';
import type { Audience } from '../contacts/audience.entity.js';
import type { ConversationService } from '../agents/conversation.service.js';
import type { CallFlowService } from './call-flow.service.js';
import type { CallFlow } from './call-flow.entity.js';
import type { Execution } from './execution.entity.js';
import { programExecutions, type ExecutionPageArgs, type ExecutionService } from './execution.service.js';
import type { Page } from '../../common/pagination.js';
import { preloadedRelation, relationKey } from '../../db/nested-relation.js';
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
  private readonly executionPages = new Map<string, DataLoader<string, Page<Execution>>>();

  constructor(
    private readonly services: { callFlows: CallFlowService; conversations: ConversationService; executions: ExecutionService },
    private readonly actor: Actor,
  ) {
    this.flows = byId((ids) => services.callFlows.flowsFor(actor, ids));
    this.agents = byId((ids) => services.conversations.agentsFor(actor, ids));
    this.audiences = byId((ids) => services.executions.audiencesFor(actor, ids));
    this.programs = byId((ids) => services.executions.programsFor(actor, ids));
  }

  /**
   * A page of a program's executions; one statement per distinct (status, page, limit), whatever the
   * number of programs, unless the programs page read them already (programExecutions, read with the page).
   */
  async executions(program: Program, args: ExecutionPageArgs): Promise<Execution[]> {
    const ready = preloadedRelation<Execution[], ExecutionPageArgs>(program, programExecutions, args);
    if (ready) return ready;
    const key = relationKey(programExecutions, args);
    let loader = this.executionPages.get(key);
    if (!loader) {
      loader = new DataLoader(async (ids) => {
        const byProgram = await this.services.executions.pagesForPrograms(this.actor, ids, args);
        return ids.map((id) => byProgram.get(id)!);
      });
      this.executionPages.set(key, loader);
    }
    return (await loader.load(program.id)).data;
  }
}

declare module '../../graphql/context.js' {
  interface GraphQLLoaders {
    programs: ProgramLoaders;
  }
}
