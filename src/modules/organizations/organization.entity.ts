import type { Opt } from '@mikro-orm/core';
import { Entity, Formula, Property } from '@mikro-orm/decorators/legacy';
import { Field, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';

/** Credits campaign runners hold for running executions, not spent yet (credit_reservations), for the organizations row `alias`. */
export const CREDITS_RESERVED_SQL = (alias: string) =>
  `(select coalesce(sum(r.remaining), 0)::int from credit_reservations r where r.organization_id = ${alias}.id)`;

/** The credits an organization has not spent: those no runner holds (the column) and those runners hold. */
export const CREDIT_BALANCE_SQL = (alias: string) => `(${alias}.credit_balance + ${CREDITS_RESERVED_SQL(alias)})`;

/** A tenant: every other record belongs to exactly one organization. */
@ObjectType()
@Entity({ tableName: 'organizations' })
export class Organization extends BaseEntity {
  @Field()
  @Property({ length: 255 })
  name!: string;

  /**
   * Credits no campaign runner holds. Runners take them in blocks into their reservations and pay
   * calls from those (one update of this row per block, not per call); what they do not spend comes back.
   */
  @Property({ fieldName: 'credit_balance', type: 'integer', default: 0 })
  unreservedCredits: number & Opt = 0;

  /**
   * Call credits not spent yet, those runners hold for running executions included: campaigns
   * spend them and pause when they run out. Read in the statement that reads the organization.
   */
  @Field(() => Int)
  @Formula((columns) => CREDIT_BALANCE_SQL(`${columns}`), { type: 'integer', lazy: false })
  creditBalance: number & Opt = 0;

  /** Of creditBalance, how many runners hold for running executions now (given back when unspent). */
  @Field(() => Int, {
    description:
      'Of creditBalance, the credits campaign runners hold for running executions right now; they are not spent yet, and go back when unused (an execution pauses, stops or completes, or its runner stops)',
  })
  @Formula((columns) => CREDITS_RESERVED_SQL(`${columns}`), { type: 'integer', lazy: false })
  creditsReserved: number & Opt = 0;

  /** Recordings older than this many days are deleted (at the carrier too) by the runner; null keeps them until a user deletes them. */
  @Field(() => Int, {
    nullable: true,
    description: 'Call recordings are deleted (at the carrier too) this many days after they were made; null: kept until deleted',
  })
  @Property({ type: 'integer', nullable: true })
  recordingRetentionDays: (number & Opt) | null = null;

  /** The origins (scheme://host[:port]) whose pages may open this organization's web calls, besides the gateway's own. */
  @Field(() => [String], {
    description:
      'Origins (https://shop.example) whose pages may open the organization’s web calls with the widget, besides the gateway’s own /talk page; empty: only /talk',
  })
  @Property({ type: 'json', default: '[]' })
  webCallOrigins: string[] & Opt = [];
}
