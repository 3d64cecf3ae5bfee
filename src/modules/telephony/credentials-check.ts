import type { EntityManager } from '@mikro-orm/postgresql';
import { ConfigError } from '../../config.js';
import { CredentialsError, open } from '../../platform/credentials.js';
import { WebhookEndpoint } from '../webhooks/webhook-endpoint.entity.js';
import { CarrierConnection } from './carrier-connection.entity.js';

/** The newest sealed value of each kind the database holds: what the key must open. */
const SEALED = [
  { sql: 'select auth_token_encrypted as sealed from carrier_connections order by created_at desc, id limit 1', what: 'carrier connections’ auth tokens' },
  { sql: 'select secret_encrypted as sealed from webhook_endpoints order by created_at desc, id limit 1', what: 'webhook endpoints’ signing secrets' },
] as const;

/**
 * At start: stored carrier connections and webhook endpoints cannot be used without the key their
 * secrets were sealed with, so a gateway refuses to start over them (one line, like a bad value)
 * without CREDENTIALS_KEY, or with a key that does not open the newest of each. A wrong key would
 * otherwise answer every carrier webhook with an error, hold every webhook delivery back, and seal
 * new secrets (a rotation, a new connection) under a key the others do not share.
 */
export async function assertCredentialsKeyFor(em: EntityManager, credentialsKey: Buffer | undefined): Promise<void> {
  if (credentialsKey) {
    const connection = em.fork().getConnection();
    for (const { sql, what } of SEALED) {
      const [row] = (await connection.execute(sql)) as { sealed: string }[];
      if (!row) continue;
      try {
        open(row.sealed, credentialsKey);
      } catch (error) {
        if (!(error instanceof CredentialsError)) throw error;
        throw new ConfigError(`CREDENTIALS_KEY does not open the ${what} stored in the database: it is not the key they were sealed with; set that key`);
      }
    }
    return;
  }
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
