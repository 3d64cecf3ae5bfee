import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Organization } from '../organizations/organization.entity.js';
import { Event } from './event.entity.js';
import type { EventType } from './event.types.js';

export interface NewEvent {
  organizationId: string;
  type: EventType;
  payload: Record<string, unknown>;
}

/**
 * Writes events into the outbox through the caller's transaction (raw SQL on `tx`), so each one
 * commits or rolls back with the change it tells about. `clock_timestamp()`, not `now()`, so the
 * events of one transaction keep their order.
 */
export const EventWriter = {
  async write(tx: EntityManager, ...events: NewEvent[]): Promise<void> {
    if (events.length === 0) return;
    const values = events.map(() => '(?, ?, ?, clock_timestamp(), ?::jsonb)').join(', ');
    const params = events.flatMap((event) => [randomUUID(), event.organizationId, event.type, JSON.stringify(event.payload)]);
    await tx.execute(`insert into events (id, organization_id, type, created_at, payload) values ${values}`, params as never[]);
  },

  /**
   * For code that changes rows through the ORM: the event joins the unit of work, so the flush
   * that writes the change writes the event in the same transaction.
   */
  stage(em: EntityManager, event: NewEvent): void {
    em.create(Event, { organization: em.getReference(Organization, event.organizationId), type: event.type, payload: event.payload });
  },
};
