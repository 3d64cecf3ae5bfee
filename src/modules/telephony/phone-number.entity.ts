import type { Opt } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { CarrierConnection } from './carrier-connection.entity.js';

/** A number the organization owns at its carrier, used as the caller ID of its programs. */
@ObjectType({ description: 'A phone number the organization owns at a carrier, used as a program’s caller ID' })
@Entity({ tableName: 'phone_numbers' })
@Unique({ properties: ['organization', 'number'] })
export class PhoneNumber extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field({ description: 'E.164, e.g. +14155550100' })
  @Property({ length: 16 })
  number!: string;

  @Field(() => String, { nullable: true, description: 'A name for the number, at most 255 characters' })
  @Property({ type: 'string', length: 255, nullable: true })
  label: (string & Opt) | null = null;

  /** The carrier account the number belongs to; without one it can only be the caller ID of simulated calls. */
  @ManyToOne(() => CarrierConnection, { nullable: true, deleteRule: 'set null' })
  carrierConnection: (CarrierConnection & Opt) | null = null;

  /** Inbound calls to the number talk to this agent (or walk `inboundFlowId`); neither: a short spoken refusal. */
  @Field(() => ID, { nullable: true, description: 'Inbound calls to this number talk to this agent' })
  @Property({ type: 'uuid', nullable: true })
  inboundAgentId: (string & Opt) | null = null;

  @Field(() => ID, { nullable: true, description: 'Inbound calls to this number walk this call flow' })
  @Property({ type: 'uuid', nullable: true })
  inboundFlowId: (string & Opt) | null = null;

  @Field(() => ID, { nullable: true })
  get carrierConnectionId(): (string & Opt) | null {
    return this.carrierConnection?.id ?? null;
  }
}
