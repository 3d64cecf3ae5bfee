import type { Actor } from '../common/actor.js';
import { AgentLoaders } from '../modules/agents/agent.loaders.js';
import { ContactLoaders } from '../modules/contacts/business-entity.loaders.js';
import { KnowledgeLoaders } from '../modules/knowledge/knowledge.loaders.js';
import { TeamLoaders } from '../modules/organizations/team.loaders.js';
import { ProgramLoaders } from '../modules/programs/programs.loaders.js';
import { TriggerLoaders } from '../modules/programs/triggers/trigger.loaders.js';
import type { Services } from '../services.js';

/** The DataLoaders of one GraphQL request, bound to its caller. */
export function createLoaders(services: Services, actor: Actor) {
  return {
    agents: new AgentLoaders(services.conversations, actor),
    teams: new TeamLoaders(services.teams, actor),
    contacts: new ContactLoaders(services.businessEntities, actor),
    programs: new ProgramLoaders(services, actor),
    triggers: new TriggerLoaders(services.triggers, actor),
    knowledge: new KnowledgeLoaders(services.knowledge, actor),
  };
}

export type GraphQLLoaders = ReturnType<typeof createLoaders>;
