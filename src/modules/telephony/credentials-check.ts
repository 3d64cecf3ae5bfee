import type { EntityManager } from '@mikro-orm/postgresql';
import { ConfigError } from '../../config.js';
import { WebhookEndpoint } from '../webhooks/webhook-endpoint.entity.js';
import { CarrierConnection } from './carrier-connection.entity.js';

/**
 * At start: stored carrier connections cannot be used without the key their tokens were sealed
 * with, so a gateway without CREDENTIALS_KEY refuses to start over them (one line, like a bad value).
 */
export async function assertCredentialsKeyFor(em: EntityManager, credentialsKey: Buffer | undefined): Promise<void> {
  if (credentialsKey) return;
  const stored = await em.fork().count(CarrierConnection, {});
  const endpoints = await em.fork().count(WebhookEndpoint, {});
  if (endpoints > 0) {
    throw new ConfigError(
      `CREDENTIALS_KEY is not set, but the database holds ${endpoints} webhook endpoint${endpoints === 1 ? '' : 's'} whose signing secrets it seals: set the key they were stored with`,
    );
  }
  if (stored > 0) {
    throw new ConfigError(
      `CREDENTIALS_KEY is not set, but the database holds ${stored} carrier connection${stored === 1 ? '' : 's'} whose auth tokens it seals: set the key they were stored with`,
    );
  }
}
