import type { Opt } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from './organization.entity.js';
import { User } from '../auth/user.entity.js';

/** A named group of users; names are unique within an organization. */
@ObjectType({ description: 'A named group of users of the organization' })
@Entity({ tableName: 'teams' })
@Unique({ properties: ['organization', 'name'] })
export class Team extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

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
