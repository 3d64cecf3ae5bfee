import type { EntityManager } from '@mikro-orm/postgresql';
import { ConfigError } from '../../config.js';
import { CredentialsError, open } from '../../platform/credentials.js';
import { query } from '../../db/sql.js';
import { WebhookEndpoint } from '../webhooks/webhook-endpoint.entity.js';
import { CarrierConnection } from '../telephony/carrier-connection.entity.js';
import { SEALED_COLUMNS } from './sealed-columns.js';

/** What an operator whose key is lost does, said in every refusal. */
export const LOST_KEY_HINT = 'if that key is lost, `npm run cli -- credentials:reset` gives new secrets or removes what it sealed (docs/operating.md)';

/**
 * At start: stored carrier connections and webhook endpoints cannot be used without the key their
 * secrets were sealed with, so a gateway refuses to start over them (one line, like a bad value)
 * without CREDENTIALS_KEY, or with a key that does not open the newest value of each sealed column.
 * A wrong key would otherwise answer every carrier webhook with an error, hold every webhook delivery
 * back, and seal new secrets (a rotation, a new connection) under a key the others do not share.
 */
export async function assertCredentialsKeyFor(em: EntityManager, credentialsKey: Buffer | undefined): Promise<void> {
  const fork = em.fork();
  if (credentialsKey) {
    for (const { table, column, what } of SEALED_COLUMNS) {
      const [row] = await query<{ sealed: string }>(
        fork,
        `select ${column} as sealed from ${table} where ${column} is not null order by created_at desc, id limit 1`,
      );
      if (!row) continue;
      try {
        open(row.sealed, credentialsKey);
      } catch (error) {
        if (!(error instanceof CredentialsError)) throw error;
        throw new ConfigError(
          `CREDENTIALS_KEY does not open the ${what} stored in the database: it is not the key they were sealed with; set that key (${LOST_KEY_HINT})`,
        );
      }
    }
    return;
  }
  const [tools] = await query<{ count: number }>(fork, 'select count(*)::int as count from tools');
  if (tools && Number(tools.count) > 0) {
    throw new ConfigError(
      `CREDENTIALS_KEY is not set, but the database holds ${tools.count} HTTP tool${Number(tools.count) === 1 ? '' : 's'} whose signing secrets it seals: set the key they were stored with (${LOST_KEY_HINT})`,
    );
  }
  const stored = await fork.count(CarrierConnection, {});
  const endpoints = await fork.count(WebhookEndpoint, {});
  if (endpoints > 0) {
    throw new ConfigError(
      `CREDENTIALS_KEY is not set, but the database holds ${endpoints} webhook endpoint${endpoints === 1 ? '' : 's'} whose signing secrets it seals: set the key they were stored with (${LOST_KEY_HINT})`,
    );
  }
  if (stored > 0) {
    throw new ConfigError(
      `CREDENTIALS_KEY is not set, but the database holds ${stored} carrier connection${stored === 1 ? '' : 's'} whose auth tokens it seals: set the key they were stored with (${LOST_KEY_HINT})`,
    );
  }
}
