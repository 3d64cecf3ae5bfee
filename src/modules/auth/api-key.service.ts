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

export interface IssuedKey {
  apiKey: ApiKey;
  secret: string;
}

/** API keys of the caller: each caller sees and manages only the keys of its own user and organization. */
export class ApiKeyService {
  constructor(private readonly em: EntityManager) {}

  /** Creates a key and returns its full value once; only the hash is stored. */
  async create(actor: Actor, input: CreateApiKeyInput): Promise<ApiKey & { secret: string }> {
    authorize(actor, 'apiKeys.own');
    const { apiKey, secret } = await this.issue(this.em, actor.organizationId, actor.userId, input);
    return Object.assign(apiKey, { secret });
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

  /** The caller's keys, newest first. */
  async list(actor: Actor): Promise<ApiKey[]> {
    return this.em.find(
      ApiKey,
      { organization: actor.organizationId, user: actor.userId },
      { orderBy: { createdAt: 'desc', id: 'asc' } },
    );
  }

  async get(actor: Actor, id: string): Promise<ApiKey> {
    const apiKey = isUuid(id)
      ? await this.em.findOne(ApiKey, { id, organization: actor.organizationId, user: actor.userId })
      : null;
    if (!apiKey) throw AppError.notFound('API key');
    return apiKey;
  }

  /** Changes only the fields that were sent; `updatedAt` moves. */
  async update(actor: Actor, id: string, input: UpdateApiKeyInput): Promise<ApiKey> {
    authorize(actor, 'apiKeys.own');
    const apiKey = await this.get(actor, id);
    if (input.name !== undefined) apiKey.name = input.name;
    if (input.isActive !== undefined) apiKey.isActive = input.isActive;
    if (input.expiresAt !== undefined) apiKey.expiresAt = input.expiresAt;
    apiKey.updatedAt = new Date();
    await this.em.flush();
    return apiKey;
  }

  async delete(actor: Actor, id: string): Promise<{ id: string; message: string }> {
    authorize(actor, 'apiKeys.own');
    const apiKey = await this.get(actor, id);
    await this.em.remove(apiKey).flush();
    return { id, message: `API key ${id} deleted` };
  }
}
