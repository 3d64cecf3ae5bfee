import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../common/errors.js';
import { query } from '../../db/sql.js';
import { CredentialsError, open, seal } from '../../platform/credentials.js';
import { newWebhookSecret, secretHint } from '../webhooks/webhook-secret.js';
import { SEALED_COLUMNS, type SealedColumn } from './sealed-columns.js';

/** A sealed value the server's key does not open, named as the operator knows it. */
export interface UnopenedSecret {
  kind: SealedColumn['kind'];
  id: string;
  field: SealedColumn['field'];
  organizationId: string;
  organization: string;
  /** The endpoint's URL or the connection's name. */
  label: string;
}

/** What a reset did to one value; `secret` is a webhook endpoint's (or a tool's) new signing secret, shown only here. */
export interface ResetSecret extends UnopenedSecret {
  action: 'newSecret' | 'previousSecretDropped' | 'removed' | 'cleared';
  secret?: string;
}

interface Row {
  id: string;
  organization_id: string;
  organization: string;
  label: string;
  sealed: string;
}

/**
 * The operator's view of what CREDENTIALS_KEY sealed (every column of SEALED_COLUMNS): which values
 * the current key does not open, and, once a key is lost, a reset that replaces or removes them so
 * the server starts again. No tenant reaches it: the operator CLI and its door on the server call it.
 */
export class SealedSecretService {
  constructor(
    private readonly em: EntityManager,
    private readonly options: { credentialsKey: () => Buffer | undefined },
  ) {}

  /** The sealed values CREDENTIALS_KEY does not open (all of them without a key), oldest organization first; and how many there are in all. */
  async unopened(organizationId?: string, em: EntityManager = this.em): Promise<{ sealed: number; unopened: UnopenedSecret[] }> {
    const key = this.options.credentialsKey();
    let sealed = 0;
    const unopened: UnopenedSecret[] = [];
    for (const column of SEALED_COLUMNS) {
      const rows = await query<Row>(
        em,
        `select t.id, t.organization_id, o.name as organization, t.${column.label} as label, t.${column.column} as sealed
           from ${column.table} t join organizations o on o.id = t.organization_id
          where t.${column.column} is not null${organizationId ? ' and t.organization_id = ?' : ''}
          order by o.created_at, o.id, t.created_at, t.id`,
        organizationId ? [organizationId] : [],
      );
      sealed += rows.length;
      for (const row of rows) {
        if (key && opens(row.sealed, key)) continue;
        unopened.push({
          kind: column.kind,
          id: row.id,
          field: column.field,
          organizationId: row.organization_id,
          organization: row.organization,
          label: row.label,
        });
      }
    }
    return { sealed, unopened };
  }

  /**
   * In one transaction, what the key does not open: a webhook endpoint's secret is replaced by a new
   * one sealed under the current key (answered here only; the secret before a rotation goes with it),
   * a secret before a rotation alone is dropped, a carrier connection is removed. Needs CREDENTIALS_KEY.
   */
  async reset(organizationId?: string): Promise<ResetSecret[]> {
    const key = this.options.credentialsKey();
    if (!key) {
      throw new AppError(
        'CONFLICT',
        'credentials:reset seals new secrets under CREDENTIALS_KEY: set it first (a new key: `openssl rand -base64 32`, kept where the server reads it)',
      );
    }
    return this.em.transactional(async (tx) => {
      const { unopened } = await this.unopened(organizationId, tx);
      const renewed = new Set<string>();
      const removed = new Set<string>();
      const done: ResetSecret[] = [];
      for (const secret of unopened) {
        const table = secret.kind === 'tool' ? 'tools' : 'webhook_endpoints';
        if (secret.kind === 'mcpServer') {
          await query(tx, 'update mcp_servers set auth_encrypted = null, auth_header_name = null, updated_at = now() where id = ?', [secret.id]);
          done.push({ ...secret, action: 'cleared' });
        } else if (secret.kind === 'tool' && secret.field === 'headers') {
          await query(tx, `update tools set headers_encrypted = null, header_names = '[]', updated_at = now() where id = ?`, [secret.id]);
          done.push({ ...secret, action: 'cleared' });
        } else if (secret.kind === 'carrierConnection') {
          // Its auth token and its webhook key are both the carrier's: either unopened removes the connection, once.
          if (removed.has(secret.id)) continue;
          removed.add(secret.id);
          await query(tx, 'delete from carrier_connections where id = ?', [secret.id]);
          done.push({ ...secret, action: 'removed' });
        } else if (secret.field === 'secret') {
          const fresh = newWebhookSecret();
          await query(
            tx,
            `update ${table} set secret_encrypted = ?, secret_hint = ?, previous_secret_encrypted = null, previous_secret_expires_at = null, updated_at = now() where id = ?`,
            [seal(fresh, key), secretHint(fresh), secret.id],
          );
          renewed.add(secret.id);
          done.push({ ...secret, action: 'newSecret', secret: fresh });
        } else if (!renewed.has(secret.id)) {
          await query(tx, `update ${table} set previous_secret_encrypted = null, previous_secret_expires_at = null, updated_at = now() where id = ?`, [
            secret.id,
          ]);
          done.push({ ...secret, action: 'previousSecretDropped' });
        }
      }
      return done;
    });
  }
}

function opens(sealed: string, key: Buffer): boolean {
  try {
    open(sealed, key);
    return true;
  } catch (error) {
    if (error instanceof CredentialsError) return false;
    throw error;
  }
}
