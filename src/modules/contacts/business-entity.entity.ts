import type { Opt } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { Contact } from './contact.entity.js';

/**
 * A named business record of a contact (an appointment, an invoice) with free-form attributes;
 * its dates can drive campaign triggers. Goes away with its contact.
 */
@ObjectType({ description: 'A business record of a contact, such as an appointment or an invoice' })
@Entity({ tableName: 'business_entities' })
export class BusinessEntity extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @ManyToOne(() => Contact, { deleteRule: 'cascade' })
  @Index()
  contact!: Contact;

  @Field(() => ID)
  get contactId(): string & Opt {
    return this.contact.id;
  }

  @Field({ description: 'What kind of record, for example appointment' })
  @Property({ length: 64 })
  type!: string;

  @Field()
  @Property({ length: 255 })
  name!: string;

  @Field(() => GraphQLJSONObject, { description: 'Free-form attributes (dates among them)' })
  @Property({ type: 'json' })
  attributes: Record<string, unknown> & Opt = {};
}
