import type { Opt } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from './organization.entity.js';
import { User } from '../auth/user.entity.js';

@ObjectType()
@Entity({ tableName: 'teams' })
export class Team extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @Field()
  @Property({ length: 255 })
  name!: string;
}

@Entity({ tableName: 'team_memberships' })
@Unique({ properties: ['team', 'user'] })
export class TeamMembership extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @ManyToOne(() => Team, { deleteRule: 'cascade' })
  team!: Team;

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  @Index()
  user!: User;

  @Property({ length: 32, default: 'member' })
  role: string & Opt = 'member';
}
