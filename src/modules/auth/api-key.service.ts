import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { isUuid } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { ApiKey } from './api-key.entity.js';
import type { CreateApiKeyInput, UpdateApiKeyInput } from './api-key.inputs.js';
import { User } from './user.entity.js';
import { hashKey, randomKeyPart } from './secrets.js';
import { authorize } from '../organizations/roles.js';
import type { CursorPageArgs, Page } from '../../common/pagination.js';
import { fixedOrderPage } from '../../db/keyset.js';
import type { KeyCache } from './key-cache.js';
import { readPage } from '../../db/read-model.js';

export interface IssuedKey {
  apiKey: ApiKey;
  secret: string;
}

/**
 * API keys of the caller: each caller sees and manages only the keys of its own user and organization.
 * A key cannot escape its limits: a user holds at most `maxPerUser` usable keys; a key made by an
 * expiring key expires no later than it; an expiry can only be brought forward, never removed or
 * pushed back; a deactivated key stays dead; an expired key can no longer be changed (only deleted).
 */
export class ApiKeyService {
  constructor(
    private readonly em: EntityManager,
    private readonly limits: { maxPerUser: number } = { maxPerUser: 50 },
    /** Authenticated keys kept briefly; forgotten here once a key changes. */
    private readonly keys?: KeyCache,
  ) {}

  /** Creates a key and returns its full value once; only the hash is stored. */
  async create(actor: Actor, input: CreateApiKeyInput): Promise<ApiKey & { secret: string }> {
    authorize(actor, 'apiKeys.own');
    const parent = await this.em.findOne(ApiKey, { id: actor.apiKeyId, organization: actor.organizationId });
    const ceiling = parent?.expiresAt ?? null;
    if (ceiling && input.expiresAt && input.expiresAt.getTime() > ceiling.getTime()) {
      throw new AppError('CONFLICT', `A key cannot outlive the key that creates it: expiresAt must be at or before ${ceiling.toISOString()}`);
    }
    return this.em.transactional(async (em) => {
      // The user's row is the lock that makes the count and the insert one step, so concurrent creates cannot pass the cap together.
      await em.execute('select id from users where id = ? for update', [actor.userId]);
      const usable = await em.count(ApiKey, {
        organization: actor.organizationId,
        user: actor.userId,
        isActive: true,
        $or: [{ expiresAt: null }, { expiresAt: { $gt: new Date() } }],
      });
      if (usable >= this.limits.maxPerUser) {
        throw new AppError('CONFLICT', `A user may hold at most ${this.limits.maxPerUser} active API keys; deactivate or delete one first`);
      }
      const { apiKey, secret } = await this.issue(em, actor.organizationId, actor.userId, { ...input, expiresAt: input.expiresAt ?? ceiling });
      return Object.assign(apiKey, { secret });
    });
  }

  /** Writes a key for a user; also used by provisioning, inside its transaction. */
  async issue(
    em: EntityManager,
    organizationId: string,
    userId: string,
    input: { name: string; prefix: string; expiresAt?: Date | null; secret?: string },
  ): Promise<IssuedKey> {
    const secret = input.secret ?? `${input.prefix}${randomKeyPart()}`;
    const apiKey = em.create(ApiKey, {
      organization: em.getReference(Organization, organizationId),
      user: em.getReference(User, userId),
      name: input.name,
      // A provisioned value shows its first characters, a generated one the prefix it was given.
      keyPrefix: input.secret ? input.secret.slice(0, 4) : input.prefix,
      keyHash: hashKey(secret),
      expiresAt: input.expiresAt ?? null,
    });
    await em.flush();
    return { apiKey, secret };
  }

  /** A page of the caller's keys, newest first, by page or by cursor (keyset on (user_id, created_at, id)). */
  async list(actor: Actor, args: CursorPageArgs): Promise<Page<ApiKey>> {
    const { rows: keys, meta } = await readPage(
      this.em,
      ApiKey,
      { organization: actor.organizationId, user: actor.userId },
      fixedOrderPage<ApiKey>(args, 'createdAt', 'desc'),
    );
    return { data: keys, meta };
  }

  async get(actor: Actor, id: string): Promise<ApiKey> {
    const apiKey = isUuid(id) ? await this.em.findOne(ApiKey, { id, organization: actor.organizationId, user: actor.userId }) : null;
    if (!apiKey) throw AppError.notFound('API key');
    return apiKey;
  }

  /**
   * Changes only the fields that were sent; `updatedAt` moves. An expired key, a revival
   * (isActive false → true) and an expiry removed or moved later are refused with 409.
   */
  async update(actor: Actor, id: string, input: UpdateApiKeyInput): Promise<ApiKey> {
    authorize(actor, 'apiKeys.own');
    const apiKey = await this.get(actor, id);
    if (apiKey.expiresAt && apiKey.expiresAt.getTime() <= Date.now()) {
      throw new AppError('CONFLICT', 'The API key has expired and can no longer be changed; delete it');
    }
    if (input.isActive === true && !apiKey.isActive) {
      throw new AppError('CONFLICT', 'A deactivated API key cannot be activated again; create a new key');
    }
    if (input.expiresAt !== undefined && apiKey.expiresAt) {
      if (input.expiresAt === null || input.expiresAt.getTime() > apiKey.expiresAt.getTime()) {
        throw new AppError('CONFLICT', `An expiry can only be brought forward: expiresAt must be at or before ${apiKey.expiresAt.toISOString()}`);
      }
    }
    if (input.name !== undefined) apiKey.name = input.name;
    if (input.isActive !== undefined) apiKey.isActive = input.isActive;
    if (input.expiresAt !== undefined) apiKey.expiresAt = input.expiresAt;
    apiKey.updatedAt = new Date();
    await this.em.flush();
    this.keys?.clear();
    return apiKey;
  }

  async delete(actor: Actor, id: string): Promise<{ id: string; message: string }> {
    authorize(actor, 'apiKeys.own');
    const apiKey = await this.get(actor, id);
    await this.em.remove(apiKey).flush();
    this.keys?.clear();
    return { id, message: `API key ${id} deleted` };
  }
}
