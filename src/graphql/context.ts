import type { Logger } from 'pino';
import type { Actor } from '../common/actor.js';
import { AppError } from '../common/errors.js';
import { throwIfAborted } from '../platform/request-timeout.js';
import type { Services } from '../services.js';
import { createLoaders, type GraphQLLoaders } from './loaders.js';

export interface GraphQLContext {
  actor: Actor | null;
  /** Credentials that were sent but did not authenticate; reported before the operation runs. */
  authError: AppError | null;
  services: Services;
  requestId: string;
  /** Aborted when the request timed out or its client went away: resolvers that run after it throw UNAVAILABLE. */
  signal?: AbortSignal;
  logger: Logger;
  /** Tells the request's metrics which operation ran. */
  onOperation?(name: string | null | undefined): void;
  /** Per-request DataLoaders, built with the context once the caller is known. */
  loaders?: GraphQLLoaders;
}

/**
 * The caller of an operation; the plugin has already refused unauthenticated operations. Every
 * resolver that reads or writes asks for it first, so it is where a timed-out request stops.
 */
export function actorOf(context: GraphQLContext): Actor {
  throwIfAborted(context.signal);
  if (!context.actor) throw new AppError('UNAUTHENTICATED', 'Authentication is required: send x-api-key or Authorization: Bearer');
  return context.actor;
}

/** The request's DataLoaders (built on first use when the context was made without them). */
export function loadersOf(context: GraphQLContext): GraphQLLoaders {
  throwIfAborted(context.signal);
  context.loaders ??= createLoaders(context.services, actorOf(context));
  return context.loaders;
}
