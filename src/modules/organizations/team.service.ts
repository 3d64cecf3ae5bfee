import type { EntityManager } from '@mikro-orm/postgresql';
import { sortedPage } from '../../db/keyset.js';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { isUuid } from '../../db/base.entity.js';
import { User } from '../auth/user.entity.js';
import { Organization } from './organization.entity.js';
import { Team, TeamMembership } from './team.entity.js';
import type { AddTeamMemberInput, CreateTeamInput, UpdateTeamInput } from './team.inputs.js';
import { TeamRole, type TeamMember } from './team.types.js';
import { authorize } from './roles.js';
import { containsPattern, sortField, type Page, type PageArgs } from '../../common/pagination.js';
import { readPage } from '../../db/read-model.js';

export const TEAM_SORT_FIELDS = ['createdAt', 'updatedAt', 'name'] as const;

/** Teams of the caller's organization: anyone in it reads them, owners and admins change them. */
export class TeamService {
  constructor(private readonly em: EntityManager) {}

  /** A page of teams; `search` matches the name. */
  async list(actor: Actor, args: PageArgs): Promise<Page<Team>> {
    const field = sortField(args.sortBy, TEAM_SORT_FIELDS);
    const { rows: teams, meta } = await readPage(
      this.em,
      Team,
      { organization: actor.organizationId, ...(args.search ? { name: { $ilike: containsPattern(args.search) } } : {}) },
      sortedPage(args, field),
    );
    return { data: teams, meta };
  }

  async get(actor: Actor, id: string): Promise<Team> {
    const team = isUuid(id) ? await this.em.findOne(Team, { id, organization: actor.organizationId }) : null;
    if (!team) throw AppError.notFound('Team');
    return team;
  }

  /** A name already used in the organization → 409 CONFLICT. */
  async create(actor: Actor, input: CreateTeamInput): Promise<Team> {
    authorize(actor, 'teams.manage');
    await this.assertNameFree(actor, input.name);
    const team = this.em.create(Team, {
      organization: this.em.getReference(Organization, actor.organizationId),
      name: input.name,
    });
    await this.em.flush();
    return team;
  }

  /** Changes only the fields that were sent; `updatedAt` moves. */
  async update(actor: Actor, id: string, input: UpdateTeamInput): Promise<Team> {
    authorize(actor, 'teams.manage');
    const team = await this.get(actor, id);
    if (input.name !== undefined && input.name !== team.name) {
      await this.assertNameFree(actor, input.name);
      team.name = input.name;
    }
    team.updatedAt = new Date();
    await this.em.flush();
    return team;
  }

  /** Deletes the team and its memberships (the users stay). */
  async delete(actor: Actor, id: string): Promise<void> {
    authorize(actor, 'teams.manage');
    const team = await this.get(actor, id);
    await this.em.remove(team).flush();
  }

  /** Adds a user of the organization, or changes the role of one already in the team. */
  async addMember(actor: Actor, teamId: string, input: AddTeamMemberInput): Promise<Team> {
    authorize(actor, 'teams.manage');
    const team = await this.get(actor, teamId);
    const user = await this.user(actor, input.userId);
    const role = input.role ?? TeamRole.member;
    const existing = await this.em.findOne(TeamMembership, { team, user });
    if (existing) existing.role = role;
    else this.em.create(TeamMembership, { organization: team.organization, team, user, role });
    team.updatedAt = new Date();
    await this.em.flush();
    return team;
  }

  /** A user of the organization who is not in the team → 404. */
  async removeMember(actor: Actor, teamId: string, userId: string): Promise<Team> {
    authorize(actor, 'teams.manage');
    const team = await this.get(actor, teamId);
    const user = await this.user(actor, userId);
    const membership = await this.em.findOne(TeamMembership, { team, user });
    if (!membership) throw AppError.notFound('Team member');
    this.em.remove(membership);
    team.updatedAt = new Date();
    await this.em.flush();
    return team;
  }

  /** The members of each team, in one statement; the teams must already be the caller's. */
  async membersOf(actor: Actor, teamIds: readonly string[]): Promise<Map<string, TeamMember[]>> {
    const memberships = await this.em.find(
      TeamMembership,
      { organization: actor.organizationId, team: { $in: [...teamIds] } },
      { populate: ['user'], orderBy: { createdAt: 'asc', id: 'asc' } },
    );
    const byTeam = new Map<string, TeamMember[]>();
    for (const membership of memberships) {
      const members = byTeam.get(membership.team.id) ?? [];
      members.push({ user: membership.user, role: membership.role as TeamRole });
      byTeam.set(membership.team.id, members);
    }
    return byTeam;
  }

  private async user(actor: Actor, userId: string): Promise<User> {
    const user = isUuid(userId) ? await this.em.findOne(User, { id: userId, organization: actor.organizationId }) : null;
    if (!user) throw AppError.notFound('User');
    return user;
  }

  private async assertNameFree(actor: Actor, name: string): Promise<void> {
    if ((await this.em.count(Team, { organization: actor.organizationId, name })) > 0) {
      throw new AppError('CONFLICT', `A team named "${name}" already exists`);
    }
  }
}
