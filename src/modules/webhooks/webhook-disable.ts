import type { EntityManager } from '@mikro-orm/postgresql';
import { at, query } from '../../db/sql.js';

/**
 * Disables an endpoint (with the gateway's reason, or null when a user did it) and fails its pending
 * deliveries: a disabled endpoint is sent nothing more; an event can be re-sent once it is enabled.
 */
export async function disableEndpoint(em: EntityManager, endpointId: string, reason: string | null, now: Date): Promise<void> {
  await em.transactional(async (tx) => {
    await query(tx, 'update webhook_endpoints set enabled = false, disabled_reason = ?, updated_at = ?::timestamptz where id = ?', [
      reason,
      at(now),
      endpointId,
    ]);
    await query(
      tx,
      "update webhook_deliveries set status = 'failed', lease_until = null, last_error = ?, updated_at = ?::timestamptz where endpoint_id = ? and status = 'pending'",
      ['The endpoint was disabled before this delivery succeeded', at(now), endpointId],
    );
  });
}
