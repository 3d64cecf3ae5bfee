import DataLoader from 'dataloader';
import type { Actor } from '../../common/actor.js';
import type { TeamService } from './team.service.js';
import type { TeamMember } from './team.types.js';

/** Per-request batch for Team.members: one statement however many teams a query shows. */
export class TeamLoaders {
  readonly members: DataLoader<string, TeamMember[]>;

  constructor(teams: TeamService, actor: Actor) {
    this.members = new DataLoader(async (ids) => {
      const byTeam = await teams.membersOf(actor, ids);
      return ids.map((id) => byTeam.get(id) ?? []);
    });
  }
}

declare module '../../graphql/context.js' {
  interface GraphQLLoaders {
    teams: TeamLoaders;
  }
}
