import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from './config.js';
import { ApiKeyService } from './modules/auth/api-key.service.js';
import { AuthService } from './modules/auth/auth.service.js';
import { AudienceService } from './modules/contacts/audience.service.js';
import { ContactService } from './modules/contacts/contact.service.js';
import { TokenService } from './modules/auth/token.service.js';
import { ProvisioningService } from './modules/organizations/provisioning.service.js';

/**
 * The service layer both doors call. Services hold the ORM's global EntityManager, which
 * resolves to the request's own fork inside a request context.
 */
export function createServices(em: EntityManager, config: Config) {
  const tokens = new TokenService(config);
  const apiKeys = new ApiKeyService(em);
  return {
    tokens,
    apiKeys,
    auth: new AuthService(em, tokens),
    provisioning: new ProvisioningService(em, apiKeys),
    contacts: new ContactService(em),
    audiences: new AudienceService(em),
  };
}

export type Services = ReturnType<typeof createServices>;
