import type { Actor, Role } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';

export const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

/**
 * The permission matrix: every write the service layer guards, and the roles that may do it.
 * Reading is open to every role and needs no entry. A key (and a token minted from it) acts with
 * its user's role as it is at the time of the request, so a demotion applies to them at once.
 * Credits are granted by the operator (CLI) only: no role has that permission.
 */
export const PERMISSIONS = {
  'agents.talk': { roles: ['owner', 'admin', 'member'], action: 'test agents and hold conversations' },
  'apiKeys.own': { roles: ['owner', 'admin', 'member'], action: 'manage their own API keys' },
  'agents.manage': { roles: ['owner', 'admin'], action: 'create, change, activate or delete agents' },
  'knowledge.manage': { roles: ['owner', 'admin'], action: 'create or delete knowledge bases and documents' },
  'contacts.manage': { roles: ['owner', 'admin'], action: 'create, change, import or delete contacts and their records' },
  'audiences.manage': { roles: ['owner', 'admin'], action: 'create, change or delete audiences' },
  'flows.manage': { roles: ['owner', 'admin'], action: 'create, change or delete call flows' },
  'programs.manage': { roles: ['owner', 'admin'], action: 'create, change, activate or delete programs and sync their triggers' },
  'executions.control': { roles: ['owner', 'admin'], action: 'start or control executions' },
  'teams.manage': { roles: ['owner', 'admin'], action: 'create, change or delete teams' },
  'telephony.manage': { roles: ['owner', 'admin'], action: 'create, change or delete carrier connections and phone numbers' },
  'recordings.manage': { roles: ['owner', 'admin'], action: 'delete call recordings' },
  'tools.manage': {
    roles: ['owner', 'admin'],
    action: 'create, change or delete HTTP tools and MCP servers, rotate tools’ secrets and refresh MCP servers’ tools',
  },
  'webhooks.manage': { roles: ['owner', 'admin'], action: 'create, change, delete or test webhook endpoints, rotate their secrets and re-send events' },
  'organization.manage': { roles: ['owner'], action: 'change the organization' },
  'users.manage': { roles: ['owner'], action: 'add, change or remove users' },
} as const satisfies Record<string, { roles: readonly Role[]; action: string }>;

export type Permission = keyof typeof PERMISSIONS;

/** Whether the caller's role grants the permission. */
export function can(actor: Pick<Actor, 'roles'>, permission: Permission): boolean {
  const allowed: readonly Role[] = PERMISSIONS[permission].roles;
  return actor.roles.some((role) => allowed.includes(role));
}

/** What a role may do, in the matrix's order: GraphQL me.permissions and GET /api/users/me, for a UI to show only the controls the API allows. */
export function permissionsOf(role: Role): Permission[] {
  return (Object.keys(PERMISSIONS) as Permission[]).filter((permission) => can({ roles: [role] }, permission));
}

/** The one check every guarded service method runs first: 403 FORBIDDEN when the role lacks the permission. */
export function authorize(actor: Pick<Actor, 'roles'>, permission: Permission): void {
  if (can(actor, permission)) return;
  const { roles, action } = PERMISSIONS[permission];
  throw new AppError('FORBIDDEN', `Only ${roles.map((role) => `an ${role}`).join(' or ')} may ${action}`);
}
