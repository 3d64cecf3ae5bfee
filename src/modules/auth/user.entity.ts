import type { Opt } from '@mikro-orm/core';
import { Entity, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import type { Role } from '../../common/actor.js';
import { Organization } from '../organizations/organization.entity.js';

@ObjectType()
@Entity({ tableName: 'users' })
@Unique({ properties: ['organization', 'email'] })
export class User extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field()
  @Property({ length: 320 })
  email!: string;

  @Field()
  @Property({ length: 255 })
  name!: string;

  @Property({ type: 'string', length: 16, default: 'member' })
  role: Role & Opt = 'member';
}
