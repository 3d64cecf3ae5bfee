import type { Opt } from '@mikro-orm/core';
import { Entity, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';

/** A named set of documents an agent retrieves passages from. */
@ObjectType({ description: 'A set of documents an agent retrieves passages from' })
@Entity({ tableName: 'knowledge_bases' })
export class KnowledgeBase extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field()
  @Property({ length: 255 })
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }
}
