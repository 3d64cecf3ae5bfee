import { Entity, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { randomUUID } from 'node:crypto';
import type { Opt } from '@mikro-orm/core';
import { PrimaryKey } from '@mikro-orm/decorators/legacy';
import { Organization } from './organization.entity.js';

export enum CreditEntryKind {
  grant = 'grant',
  spend = 'spend',
  refund = 'refund',
}
registerEnumType(CreditEntryKind, {
  name: 'CreditEntryKind',
  description:
    'grant: the operator added credits; spend: the campaign runner took them for calls; refund: a call the carrier never took or refused gave its credit back',
  valuesConfig: {
    grant: { description: 'The operator added credits (CLI credits:add)' },
    spend: { description: 'The campaign runner took credits for calls' },
    refund: { description: 'A call the carrier never took or refused gave its credit back' },
  },
});

/**
 * One movement of an organization's credits, written in the transaction that moves the balance:
 * a grant by the operator (CLI), or a spend by the campaign runner (one row per batch of calls
 * it claims, so a tick costs one insert, not one per call). Rows are never changed.
 */
@ObjectType({ description: 'A movement of the organization’s credits' })
@Entity({ tableName: 'credit_ledger' })
export class CreditLedgerEntry {
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string & Opt = randomUUID();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => CreditEntryKind)
  @Property({ type: 'string', length: 16 })
  kind!: CreditEntryKind;

  @Field(() => Int, { description: 'Positive for a grant, negative for a spend' })
  @Property({ type: 'integer' })
  amount!: number;

  @Field(() => Int, { description: 'The balance right after this movement' })
  @Property({ type: 'integer' })
  balanceAfter!: number;

  @Field(() => String, { nullable: true, description: 'The operator’s reason for a grant' })
  @Property({ type: 'string', length: 500, nullable: true })
  reason: (string & Opt) | null = null;

  @Field(() => ID, { nullable: true, description: 'The execution whose calls a spend paid for' })
  @Property({ type: 'uuid', nullable: true })
  executionId: (string & Opt) | null = null;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'Date' })
  createdAt: Date & Opt = new Date();
}
