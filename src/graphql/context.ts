import type { Logger } from 'pino';
import type { Actor } from '../common/actor.js';
import { AppError } from '../common/errors.js';
import type { AnswerBudget } from '../platform/answer-budget.js';
import { throwIfAborted } from '../platform/request-timeout.js';
import type { Services } from '../services.js';

/** The DataLoaders of one request: each module adds its own (declaration merging), src/doors.ts builds them. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface GraphQLLoaders {}

export interface GraphQLContext {
  actor: Actor | null;
  /** Credentials that were sent but did not authenticate; reported before the operation runs. */
  authError: AppError | null;
  services: Services;
  requestId: string;
  /** Aborted when the request timed out or its client went away: resolvers that run after it throw UNAVAILABLE. */
  signal?: AbortSignal;
  /** What the answer may still take (RESPONSE_MAX_BYTES); once spent, the answer is the refusal alone. */
  answerBudget?: AnswerBudget;
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

/** The request's DataLoaders (the app builds them with the context once the caller is known). */
export function loadersOf(context: GraphQLContext): GraphQLLoaders {
  actorOf(context);
  if (!context.loaders) throw new Error('GraphQL context without loaders');
  return context.loaders;
}
