import { AsyncLocalStorage } from 'node:async_hooks';
import { RequestContext, TransactionContext, type EntityManager, type InflightQueryAbortStrategy } from '@mikro-orm/core';

// A request's EntityManager, forked the first time something of the request asks for it. MikroORM's
// RequestContext.create forks for every request it wraps, up front: an identity map, a unit of work and
// two writes of process.env (Configuration.set), about 3 % of a REST list's CPU, for requests most of
// which never use it (a list page is read on the pool by the read model; a GraphQL query PostgreSQL
// answers whole touches no entity). The ORM's `context` option (`contextEntityManager`) makes the fork
// when an entity manager is first asked for inside the request, with the options the request gave.

/** What a request's fork carries besides its identity map: its abort signal (Database.abortOptions). */
export interface RequestOptions {
  signal?: AbortSignal;
  inflightQueryAbortStrategy?: InflightQueryAbortStrategy;
}

interface Scope {
  /** The global entity manager the fork is made from. */
  root: EntityManager;
  options: RequestOptions;
  /** The fork; null while it is being made (its constructor asks for its own context). */
  em: EntityManager | undefined | null;
}

const scopes = new AsyncLocalStorage<Scope>();

/**
 * The ORM's `context` option: the entity manager of the innermost context. A RequestContext.create
 * inside a request (a subscription's event, a voice session) wins over the request's own scope, as
 * it did when the request's was a RequestContext too.
 */
export function contextEntityManager(name: string): EntityManager | undefined {
  const held = RequestContext.getEntityManager(name);
  if (held) return held;
  const scope = scopes.getStore();
  if (!scope || scope.root.name !== name || scope.em === null) return undefined;
  if (scope.em === undefined) {
    scope.em = null;
    try {
      scope.em = scope.root.fork({ ...scope.options, useContext: true, disableContextResolution: true });
    } catch (error) {
      scope.em = undefined;
      throw error;
    }
  }
  return scope.em;
}

/** Whether the caller runs for a request (rather than for the runner or a worker): the embedded database serves those first. */
export function inRequestScope(): boolean {
  return scopes.getStore() !== undefined;
}

/** Runs `next` in a request's scope: `em`'s fork with `options` (an abort signal) is made on first use. */
export function runInRequestScope<T>(em: EntityManager, options: RequestOptions, next: () => T): T {
  return scopes.run({ root: em, options, em: undefined }, next);
}

/**
 * The request's own fork options when a statement run on `em` would be the request's and its fork is
 * not made yet: `em` is the global entity manager (which finds its context), inside a request's scope,
 * and no transaction or inner context holds another. A read on the pool (read-model.ts) needs of its
 * context only its abort signal and whether it is in a transaction (it is not): it takes them from here
 * rather than make the fork to ask it. Undefined otherwise: ask `em`.
 */
export function unforkedRequestOptions(em: EntityManager): RequestOptions | undefined {
  if (!em.global) return undefined;
  const scope = scopes.getStore();
  if (!scope || scope.em !== undefined || scope.root.name !== em.name) return undefined;
  if (TransactionContext.getEntityManager(em.name) || RequestContext.getEntityManager(em.name)) return undefined;
  return scope.options;
}
