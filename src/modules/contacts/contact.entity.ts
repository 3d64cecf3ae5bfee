import type { Opt } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';

/** A person a campaign can call; one contact per phone number in an organization. */
@ObjectType({ description: 'A person a campaign can call' })
@Entity({ tableName: 'contacts' })
@Unique({ properties: ['organization', 'phone'] })
export class Contact extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field(() => String, { nullable: true, description: 'Full name' })
  @Property({ type: 'string', length: 255, nullable: true })
  name: (string & Opt) | null = null;

  @Field({ description: 'E.164, for example +14155550100' })
  @Property({ length: 16 })
  phone!: string;

  @Field(() => String, {
    nullable: true,
    description: 'The organization’s own key for the contact (a CRM’s id), unique in the organization; set by a CSV import’s externalId column',
  })
  @Property({ type: 'string', length: 255, nullable: true })
  externalId: (string & Opt) | null = null;

  @Field(() => String, { nullable: true, description: 'IANA time zone, for example Europe/Paris' })
  @Property({ type: 'string', length: 64, nullable: true })
  timeZone: (string & Opt) | null = null;

  @Field(() => GraphQLJSONObject, { description: 'Free-form attributes (dates among them) used by campaigns' })
  @Property({ type: 'json' })
  attributes: Record<string, unknown> & Opt = {};

  @Field(() => Boolean, { description: 'An opted-out contact is never called' })
  @Property({ type: 'boolean', default: false })
  optedOut: boolean & Opt = false;
}
