import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from '../../db/base.entity.js';
import { Contact } from '../contacts/contact.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { Execution } from './execution.entity.js';
import { ExecutionContactStatus } from './program.enums.js';

/**
 * An execution's work queue: one row per contact. Runners claim `pending` rows with
 * FOR UPDATE SKIP LOCKED and hold them for a lease; a row whose lease ran out (a runner died
 * mid-call) goes back to pending without counting an attempt.
 */
@Entity({ tableName: 'execution_contacts' })
@Unique({ properties: ['execution', 'contact'] })
@Index({ properties: ['execution', 'status', 'nextAttemptAt'] })
// The claim's order over the pending rows only, so a claim reads what it takes (Migration20261226000000).
@Index({
  name: 'execution_contacts_claim_order_index',
  expression: `create index "execution_contacts_claim_order_index" on "execution_contacts" ("execution_id", "next_attempt_at" nulls first, "created_at", "id") where "status" = 'pending'`,
})
export class ExecutionContact extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @ManyToOne(() => Execution, { deleteRule: 'cascade' })
  execution!: Execution;

  /** Kept when the contact is deleted later, so the execution's counts stay whole. */
  @ManyToOne(() => Contact, { nullable: true, deleteRule: 'set null' })
  contact: (Contact & Opt) | null = null;

  @Property({ length: 16 })
  phone!: string;

  @Property({ type: 'string', length: 64, nullable: true })
  timeZone: (string & Opt) | null = null;

  @Enum({ items: () => ExecutionContactStatus, default: ExecutionContactStatus.pending })
  status: ExecutionContactStatus & Opt = ExecutionContactStatus.pending;

  @Property({ type: 'integer', default: 0 })
  attempts: number & Opt = 0;

  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  nextAttemptAt: (Date & Opt) | null = null;

  /** The runner holding the row, and until when. */
  @Property({ type: 'string', length: 64, nullable: true })
  claimedBy: (string & Opt) | null = null;

  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  leaseUntil: (Date & Opt) | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  lastOutcome: (string & Opt) | null = null;

  /** Node ids the contact's calls in this execution reached, all attempts together, in first-reached order. */
  @Property({ type: 'json' })
  reachedNodeIds: string[] & Opt = [];

  /** A live trigger fired for a new date while this row was still being worked: call the contact again once it is recorded. */
  @Property({ type: 'boolean', default: false })
  requeue: boolean & Opt = false;

  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  completedAt: (Date & Opt) | null = null;
}
