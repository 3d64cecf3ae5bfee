import { AppError } from '../common/errors.js';
import type { Actor } from '../common/actor.js';

export interface LiveConnectionLimits {
  /** Live connections (graphql-ws sockets and SSE streams together) one API key may hold open at once in this process. */
  perKey: number;
  /** Live connections all the keys of one organization may hold open at once in this process. */
  perOrganization: number;
}

/**
 * The open live connections of this process, counted across both live doors (graphql-ws sockets
 * and SSE streams), per API key and per organization. `open` takes a place or refuses with
 * RATE_LIMITED (429 on REST, `RATE_LIMITED` on GraphQL); the function it answers gives the place
 * back, once, however often it is called.
 */
export class LiveConnections {
  private readonly byKey = new Map<string, number>();
  private readonly byOrganization = new Map<string, number>();

  constructor(readonly limits: LiveConnectionLimits) {}

  /** Takes a place for `actor`'s new live connection; throws RATE_LIMITED when its key or organization has none left. */
  open(actor: Actor): () => void {
    const key = this.byKey.get(actor.apiKeyId) ?? 0;
    const organization = this.byOrganization.get(actor.organizationId) ?? 0;
    if (key >= this.limits.perKey) {
      throw new AppError(
        'RATE_LIMITED',
        `This API key already has ${key} open live connections (subscription sockets and event streams), the most LIVE_CONNECTIONS_PER_KEY allows (${this.limits.perKey}); close one first`,
      );
    }
    if (organization >= this.limits.perOrganization) {
      throw new AppError(
        'RATE_LIMITED',
        `This organization already has ${organization} open live connections (subscription sockets and event streams), the most LIVE_CONNECTIONS_PER_ORG allows (${this.limits.perOrganization}); close one first`,
      );
    }
    this.byKey.set(actor.apiKeyId, key + 1);
    this.byOrganization.set(actor.organizationId, organization + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      decrement(this.byKey, actor.apiKeyId);
      decrement(this.byOrganization, actor.organizationId);
    };
  }

  /** Open live connections of a key and of an organization (tests, metrics). */
  count(scope: { apiKeyId?: string; organizationId?: string }): { key: number; organization: number } {
    return {
      key: scope.apiKeyId === undefined ? 0 : (this.byKey.get(scope.apiKeyId) ?? 0),
      organization: scope.organizationId === undefined ? 0 : (this.byOrganization.get(scope.organizationId) ?? 0),
    };
  }
}

function decrement(counts: Map<string, number>, id: string): void {
  const left = (counts.get(id) ?? 1) - 1;
  if (left <= 0) counts.delete(id);
  else counts.set(id, left);
}
