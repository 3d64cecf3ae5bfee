import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, Formula, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { Contact } from './contact.entity.js';
import type { SegmentFilter } from './segment-filter.js';

export enum AudienceKind {
  static = 'static',
  dynamic = 'dynamic',
}
// Stryker disable next-line all: schema wiring; the schema test compares the printed schema
registerEnumType(AudienceKind, {
  name: 'AudienceKind',
  description: 'Whether an audience lists its members or is a filter over the contacts (a segment)',
  valuesConfig: {
    static: { description: 'Its members are the contacts added to it' },
    dynamic: { description: 'Its members are the contacts its filter matches' },
  },
});

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

  /** `static`: its members are the contacts added to it; `dynamic`: whoever matches its filter (a segment). */
  @Field(() => AudienceKind, {
    description: 'static: the contacts added to it; dynamic: every contact its filter matches, at the time it is read or snapshotted',
  })
  @Enum({ items: () => AudienceKind, default: AudienceKind.static })
  kind: AudienceKind & Opt = AudienceKind.static;

  /** A dynamic audience's filter (segment-filter.ts); null for a static one. */
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'A dynamic audience’s filter (the grammar: docs/campaigns.md); null for a static audience' })
  @Property({ type: 'json', nullable: true })
  filter: (SegmentFilter & Opt) | null = null;

  /**
   * A static audience's count is kept by triggers on its memberships (read, never counted); a dynamic
   * audience's is counted when it is read (AudienceService), by its filter's index.
   */
  @Field(() => Int, { description: 'How many contacts are members: for a dynamic audience, how many match its filter now' })
  @Formula((columns) => `${columns}.member_count`, { type: 'integer', lazy: false })
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
