import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
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
      else print(`Default organization created. Its API key is in ${store(created.apiKey)} (readable by this user only); keep it somewhere safe, then delete that file.`);
      return;
    }
    if (!bootstrapKey || (await em.count(ApiKey, { keyHash: hashKey(bootstrapKey) })) > 0) return;
    const owner = await em.findOne(User, { organization: first, role: 'owner' }, { orderBy: { createdAt: 'asc' } });
    if (!owner) return;
    await this.apiKeys.issue(em, first.id, owner.id, { name: 'Bootstrap key', prefix: DEFAULT_KEY_PREFIX, secret: bootstrapKey });
    print(`Registered BOOTSTRAP_API_KEY for organization "${first.name}".`);
  }
}
