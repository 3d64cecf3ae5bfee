import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { User } from '../auth/user.entity.js';
import { createPageType } from '../../common/pagination.js';
import { Team } from './team.entity.js';

export enum TeamRole {
  lead = 'lead',
  member = 'member',
}
registerEnumType(TeamRole, {
  name: 'TeamRole',
  description: 'What a user is in a team',
  valuesConfig: {
    lead: { description: 'Leads the team' },
    member: { description: 'A member of the team' },
  },
});

@ObjectType({ description: 'A user of the organization in a team' })
export class TeamMember {
  @Field(() => User)
  user!: User;

  @Field(() => TeamRole)
  role!: TeamRole;
}

export const TeamPage = createPageType(Team, 'TeamPage');
