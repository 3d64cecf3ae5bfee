import type { EntityManager } from '@mikro-orm/postgresql';
import { sortedPage } from '../../db/keyset.js';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { containsPattern, sortField, type Page, type PageArgs } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { authorize } from '../organizations/roles.js';
import type { ApiKeyService } from './api-key.service.js';
import { User } from './user.entity.js';
import type { AddUserInput, UpdateUserRoleInput } from './user.inputs.js';
import { UserRole, type AddedUser, type OrganizationUser } from './user.types.js';
import type { KeyCache } from './key-cache.js';
import { readPage } from '../../db/read-model.js';

export const USER_SORT_FIELDS = ['createdAt', 'updatedAt', 'email', 'name', 'role'] as const;
export const FIRST_KEY_PREFIX = 'tag_';

const present = (user: User): OrganizationUser => ({
  id: user.id,
  email: user.email,
  name: user.name,
  role: user.role as UserRole,
  createdAt: user.createdAt,
  updatedAt: user.updatedAt,
});

/**
 * The users of the caller's organization: everyone reads the list, only owners add, re-role or
 * remove users, and the last owner can be neither demoted nor removed (409).
 */
export class UserService {
  constructor(
    private readonly em: EntityManager,
    private readonly apiKeys: ApiKeyService,
    /** Authenticated keys kept briefly; forgotten here once a user's role changes or the user goes. */
    private readonly keys?: KeyCache,
  ) {}

  /** A page of users; `search` matches email or name. */
  async list(actor: Actor, args: PageArgs): Promise<Page<OrganizationUser>> {
    const field = sortField(args.sortBy, USER_SORT_FIELDS);
    const pattern = args.search ? containsPattern(args.search) : undefined;
    const { rows: users, meta } = await readPage(
      this.em,
      User,
      {
        organization: actor.organizationId,
        ...(pattern ? { $or: [{ email: { $ilike: pattern } }, { name: { $ilike: pattern } }] } : {}),
      },
      sortedPage(args, field),
    );
    return { data: users.map(present), meta };
  }

  /**
   * Adds a user with a role and gives it a first API key, whose secret is in this answer only:
   * the owner hands it over, the user exchanges it for its own keys and deletes it.
   */
  async add(actor: Actor, input: AddUserInput): Promise<AddedUser> {
    authorize(actor, 'users.manage');
    const email = input.email.toLowerCase();
    return this.em.transactional(async (em) => {
      if ((await em.count(User, { organization: actor.organizationId, email })) > 0) {
        throw new AppError('CONFLICT', `A user with the email ${email} is already in the organization`);
      }
      const user = em.create(User, {
        organization: em.getReference(Organization, actor.organizationId),
        email,
        name: input.name ?? email.split('@')[0] ?? email,
        role: input.role,
      });
      await em.flush();
      const { apiKey, secret } = await this.apiKeys.issue(em, actor.organizationId, user.id, { name: 'First key', prefix: FIRST_KEY_PREFIX });
      return { user: present(user), apiKey: Object.assign(apiKey, { secret }) };
    });
  }

  /** Changes a user's role; the keys and tokens of that user act with the new role from the next request. */
  async updateRole(actor: Actor, id: string, input: UpdateUserRoleInput): Promise<OrganizationUser> {
    authorize(actor, 'users.manage');
    const updated = await this.em.transactional(async (em) => {
      const user = await this.lockedUser(em, actor, id);
      if (user.role === UserRole.owner && input.role !== UserRole.owner) await this.assertAnotherOwner(em, actor, user);
      user.role = input.role;
      user.updatedAt = new Date();
      await em.flush();
      return present(user);
    });
    this.keys?.clear();
    return updated;
  }

  /** Removes a user; its API keys go with it (cascade), so its keys and tokens stop working at once. */
  async remove(actor: Actor, id: string): Promise<{ id: string; message: string }> {
    authorize(actor, 'users.manage');
    await this.em.transactional(async (em) => {
      const user = await this.lockedUser(em, actor, id);
      if (user.role === UserRole.owner) await this.assertAnotherOwner(em, actor, user);
      await em.remove(user).flush();
    });
    this.keys?.clear();
    return { id, message: `User ${id} removed` };
  }

  /**
   * The organization's owners are locked first, so two owners demoting or removing each other at
   * the same time cannot both pass the "another owner remains" check.
   */
  private async lockedUser(em: EntityManager, actor: Actor, id: string): Promise<User> {
    if (!isUuid(id)) throw AppError.notFound('User');
    await em.execute(`select id from users where organization_id = ? and role = 'owner' order by id for update`, [actor.organizationId]);
    const user = await em.findOne(User, { id, organization: actor.organizationId }, { refresh: true });
    if (!user) throw AppError.notFound('User');
    return user;
  }

  private async assertAnotherOwner(em: EntityManager, actor: Actor, user: User): Promise<void> {
    const owners = await em.count(User, { organization: actor.organizationId, role: UserRole.owner, id: { $ne: user.id } });
    if (owners === 0) throw new AppError('CONFLICT', 'The organization must keep at least one owner');
  }
}
