import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { AppError } from '../../common/errors.js';
import { isUuid } from '../../db/base.entity.js';
import { ApiKey } from '../auth/api-key.entity.js';
import type { ApiKeyService } from '../auth/api-key.service.js';
import { hashKey } from '../auth/secrets.js';
import { User } from '../auth/user.entity.js';
import { Organization } from './organization.entity.js';

export interface ProvisionInput {
  name: string;
  email: string;
  userName?: string;
  /** A fixed key value (BOOTSTRAP_API_KEY); generated when absent. */
  apiKey?: string;
}

export interface Provisioned {
  organizationId: string;
  userId: string;
  apiKey: string;
}

export const DEFAULT_KEY_PREFIX = 'tag_';

export interface IssuedOperatorKey extends Provisioned {
  apiKeyId: string;
}

export interface OrganizationSummary {
  id: string;
  name: string;
  createdAt: string;
  users: number;
}

/** Operator provisioning: an organization, its owner and a first API key, in one transaction. */
export class ProvisioningService {
  constructor(
    private readonly em: EntityManager,
    private readonly apiKeys: ApiKeyService,
  ) {}

  async createOrganization(input: ProvisionInput): Promise<Provisioned> {
    return this.em.transactional(async (em) => {
      const organization = em.create(Organization, { name: input.name });
      const user = em.create(User, {
        organization,
        email: input.email.toLowerCase(),
        name: input.userName ?? input.email.split('@')[0] ?? input.email,
        role: 'owner',
      });
      await em.flush();
      const { secret } = await this.apiKeys.issue(em, organization.id, user.id, {
        name: 'Provisioned key',
        prefix: DEFAULT_KEY_PREFIX,
        secret: input.apiKey,
      });
      return { organizationId: organization.id, userId: user.id, apiKey: secret };
    });
  }

  /**
   * First start on an empty database: a "Default" organization whose generated key goes to `store`
   * (a 0600 file; only its place is printed, never the key, so logs do not keep it).
   * With BOOTSTRAP_API_KEY, that value is registered instead (and on later starts, if it is missing).
   */
  async bootstrap(bootstrapKey: string | undefined, logger: Logger, print: (line: string) => void, store: (apiKey: string) => string): Promise<void> {
    const em = this.em.fork();
    const [first] = await em.find(Organization, {}, { orderBy: { createdAt: 'asc' }, limit: 1 });
    if (!first) {
      const created = await new ProvisioningService(em, this.apiKeys).createOrganization({
        name: 'Default',
        email: 'admin@default.local',
        userName: 'Administrator',
        apiKey: bootstrapKey,
      });
      logger.info({ organizationId: created.organizationId }, 'created the Default organization');
      if (bootstrapKey) print('Registered BOOTSTRAP_API_KEY as the API key of the Default organization.');
      else {
        // The guides read the key from this file, so the line says to keep it, and how to get another.
        print(
          `Default organization created. Its API key is in ${store(created.apiKey)} (readable by this user only); ` +
            'the guides read it from there, so keep that file. Another key: npm run cli -- keys:create --org Default',
        );
      }
      return;
    }
    if (!bootstrapKey || (await em.count(ApiKey, { keyHash: hashKey(bootstrapKey) })) > 0) return;
    const owner = await em.findOne(User, { organization: first, role: 'owner' }, { orderBy: { createdAt: 'asc' } });
    if (!owner) return;
    await this.apiKeys.issue(em, first.id, owner.id, { name: 'Bootstrap key', prefix: DEFAULT_KEY_PREFIX, secret: bootstrapKey });
    print(`Registered BOOTSTRAP_API_KEY for organization "${first.name}".`);
  }

  /**
   * Operator: a new key for an existing organization, owned by the user with `email` or, without it,
   * by the organization's first owner. An email alone must name a user of one organization only.
   */
  async issueKey(input: { organizationId?: string; email?: string; name?: string }): Promise<IssuedOperatorKey> {
    if (input.organizationId !== undefined && !isUuid(input.organizationId)) throw AppError.notFound('Organization');
    const where = {
      ...(input.organizationId ? { organization: input.organizationId } : {}),
      ...(input.email ? { email: input.email.toLowerCase() } : { role: 'owner' as const }),
    };
    const users = await this.em.find(User, where, { orderBy: { createdAt: 'asc' }, limit: input.organizationId ? 1 : 2 });
    const user = users[0];
    if (!user) {
      if (input.organizationId && !(await this.em.count(Organization, { id: input.organizationId }))) throw AppError.notFound('Organization');
      throw AppError.notFound(input.email ? 'A user with that email' : 'An owner of the organization');
    }
    if (users.length > 1) throw new AppError('CONFLICT', `${input.email} is a user of several organizations; add --org <id>`);
    return this.em.transactional(async (em) => {
      const { apiKey, secret } = await this.apiKeys.issue(em, user.organization.id, user.id, {
        name: input.name ?? 'Operator key',
        prefix: DEFAULT_KEY_PREFIX,
      });
      return { organizationId: user.organization.id, userId: user.id, apiKeyId: apiKey.id, apiKey: secret };
    });
  }

  /** Operator: every organization, oldest first, with its number of users (one statement). */
  async listOrganizations(): Promise<OrganizationSummary[]> {
    const rows = await this.em.getConnection().execute<{ id: string; name: string; created_at: Date | string; users: string | number }[]>(
      `select o.id, o.name, o.created_at, (select count(*) from users u where u.organization_id = o.id) as users
         from organizations o order by o.created_at, o.id`,
    );
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      createdAt: new Date(row.created_at).toISOString(),
      users: Number(row.users),
    }));
  }
}
