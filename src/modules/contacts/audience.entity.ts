import type { Opt } from '@mikro-orm/core';
import { Entity, Formula, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { Contact } from './contact.entity.js';

/** A named segment of contacts that a campaign execution calls. */
@ObjectType({ description: 'A named segment of contacts' })
@Entity({ tableName: 'audiences' })
export class Audience extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field()
  @Property({ length: 255 })
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description: (string & Opt) | null = null;

  /**
   * Counted in the same SQL statement that reads the audience (and sorts a page by it), from the
   * (audience, contact) unique index, so it is always true to the members; never stored.
   */
  @Field(() => Int, { description: 'How many contacts are members' })
  @Formula((columns) => `(select count(*)::int from audience_members m where m.audience_id = ${columns}.id)`, { type: 'integer', lazy: false })
  contactCount: number & Opt = 0;
}

/** Membership of a contact in an audience; goes away with either side. */
@Entity({ tableName: 'audience_members' })
@Unique({ properties: ['audience', 'contact'] })
export class AudienceMember extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @ManyToOne(() => Audience, { deleteRule: 'cascade' })
  audience!: Audience;

  @ManyToOne(() => Contact, { deleteRule: 'cascade' })
  @Index()
  contact!: Contact;
}
