import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { isUuid } from '../../db/base.entity.js';
import { columnsToReadObject } from '../../db/read-model.js';
import { ApiKey } from './api-key.entity.js';
import { KeyCache } from './key-cache.js';
import { hashKey } from './secrets.js';
import type { TokenService } from './token.service.js';
import type { CurrentUser } from './auth.types.js';
import { User } from './user.entity.js';
import type { UserRole } from './user.types.js';
import { permissionsOf } from '../organizations/roles.js';

export interface Credentials {
  apiKey?: string;
  authorization?: string;
}

/** How often a key's lastUsedAt is written at most; a write per request would cost more than it tells. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Turns request credentials into an Actor, and answers who the caller is. */
export class AuthService {
  constructor(
    private readonly em: EntityManager,
    private readonly tokens: TokenService,
    /** Keys recently looked up; the services that change keys and users clear it. */
    readonly keys: KeyCache = new KeyCache(0),
  ) {}

  /**
   * The caller behind the credentials, or null when none were sent. A key that is unknown,
   * inactive or expired, and a token that is invalid or whose key was revoked: UNAUTHENTICATED.
   */
  async authenticate(credentials: Credentials): Promise<Actor | null> {
    if (credentials.apiKey !== undefined) {
      const hash = hashKey(credentials.apiKey);
      const key = await this.cachedKey(`h:${hash}`, 'k.key_hash = ?', [hash]);
      if (!key || !key.isUsable()) throw new AppError('UNAUTHENTICATED', 'The API key is unknown, inactive or expired');
      await this.touch(key);
      return this.actorOf(key, 'api-key');
    }
    if (credentials.authorization !== undefined) {
      const match = /^Bearer\s+(\S+)$/i.exec(credentials.authorization);
      if (!match?.[1]) throw new AppError('UNAUTHENTICATED', 'The Authorization header must be "Bearer <token>"');
      const claims = this.tokens.verify(match[1]);
      const key = isUuid(claims.akid)
        ? await this.cachedKey(`t:${claims.akid}:${claims.org}:${claims.sub}`, 'k.id = ? and k.organization_id = ? and k.user_id = ?', [
            claims.akid,
            claims.org,
            claims.sub,
          ])
        : null;
      if (!key || !key.isUsable()) throw new AppError('UNAUTHENTICATED', 'The key this token was issued from is no longer valid');
      return this.actorOf(key, 'token');
    }
    return null;
  }

  /**
   * Which of these keys may still pass (active, not expired, not deleted): one statement for all of
   * them, the rule being the key's own `isUsable`. Open subscription sockets are checked with it.
   */
  async usableKeyIds(ids: readonly string[], now = new Date()): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const em = this.em.fork(); // also called outside any request (a timer)
    const rows = await em.getConnection().execute<Record<string, unknown>[]>(`select * from api_keys where id in (${ids.map(() => '?').join(', ')})`, [...ids]);
    return new Set(
      rows
        .map((row) => columnsToReadObject(em, ApiKey, row))
        .filter((key) => key.isUsable(now))
        .map((key) => key.id),
    );
  }

  async me(actor: Actor): Promise<CurrentUser> {
    const user = await this.em.findOne(User, { id: actor.userId, organization: actor.organizationId }, { populate: ['organization'] });
    if (!user) throw AppError.notFound('User');
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      organizationId: user.organization.id,
      organization: { id: user.organization.id, name: user.organization.name },
      role: user.role as UserRole,
      permissions: permissionsOf(user.role),
    };
  }

  /** The key from the cache while its entry lasts, else from the database (then kept if it is usable). */
  private async cachedKey(lookup: string, condition: string, params: string[]): Promise<ApiKey | null> {
    const cached = this.keys.get(lookup);
    if (cached) return cached;
    const mark = this.keys.mark();
    const key = await this.findKey(condition, params);
    if (key?.isUsable()) this.keys.set(lookup, key, mark);
    return key;
  }

  /**
   * The key and its user's role: the one statement every request runs, so it is written once here
   * rather than built by the query builder per request, and read without hydrating entities.
   */
  private async findKey(condition: string, params: string[]): Promise<ApiKey | null> {
    const [row] = await this.em.execute<Record<string, unknown>[]>(
      `select k.*, u.role as user_role from api_keys k join users u on u.id = k.user_id where ${condition} limit 1`,
      params,
    );
    if (!row) return null;
    const { user_role: role, ...columns } = row;
    const key = columnsToReadObject(this.em, ApiKey, columns);
    Object.assign(key.user, { role });
    return key;
  }

  private actorOf(key: ApiKey, via: Actor['via']): Actor {
    return {
      userId: key.user.id,
      organizationId: key.organization.id,
      roles: [key.user.role],
      via,
      apiKeyId: key.id,
    };
  }

  private async touch(key: ApiKey): Promise<void> {
    const now = new Date();
    if (key.lastUsedAt && now.getTime() - key.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    await this.em.nativeUpdate(ApiKey, { id: key.id }, { lastUsedAt: now });
    // The cached read object remembers it, so the next requests within the minute write nothing.
    key.lastUsedAt = now;
  }
}
