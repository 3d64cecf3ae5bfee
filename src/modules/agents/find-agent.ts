import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { isUuid } from '../../db/base.entity.js';
import { Agent } from './agent.entity.js';

// Its own module, so that the agents' and the conversations' services both use it without importing each other.

/** An agent of the actor's organization, archived ones included; 404 otherwise. */
export async function findAgent(em: EntityManager, actor: Actor, id: string): Promise<Agent> {
  const agent = isUuid(id) ? await em.findOne(Agent, { id, organization: actor.organizationId }) : null;
  if (!agent) throw AppError.notFound('Agent');
  return agent;
}
