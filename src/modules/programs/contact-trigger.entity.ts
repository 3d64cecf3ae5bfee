import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { Program } from './program.entity.js';
import { TriggerStatus } from './program.enums.js';

/** A live program's appointment with one contact on one date. */
@ObjectType({ description: 'When a live program calls a contact' })
@Entity({ tableName: 'contact_triggers' })
@Unique({ properties: ['program', 'contactId', 'attributeValue'] })
@Index({ properties: ['status', 'triggerAt'] })
@Index({ properties: ['program', 'status'] })
export class ContactTrigger extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @ManyToOne(() => Program, { deleteRule: 'cascade' })
  program!: Program;

  /** No foreign key: a removed contact's triggers are cancelled and kept, so the history stays. */
  @Field(() => ID)
  @Property({ type: 'uuid' })
  contactId!: string;

  @Field({ description: 'Primary phone of the contact' })
  @Property({ length: 16 })
  contactPhone!: string;

  @Field(() => String, { nullable: true, description: 'Full name of the contact' })
  @Property({ type: 'string', length: 255, nullable: true })
  contactName: (string & Opt) | null = null;

  @Field(() => Date, { description: 'When the trigger fires' })
  @Property({ columnType: 'timestamptz', type: 'Date' })
  triggerAt!: Date;

  @Field({ description: 'The raw date attribute value' })
  @Property({ length: 64 })
  attributeValue!: string;

  @Field(() => TriggerStatus)
  @Enum({ items: () => TriggerStatus, default: TriggerStatus.pending })
  status: TriggerStatus & Opt = TriggerStatus.pending;

  @Field(() => Date, { nullable: true, description: 'When the trigger was processed' })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  triggeredAt: (Date & Opt) | null = null;
}
