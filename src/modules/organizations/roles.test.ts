import type { Role } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { authorize, can, permissionsOf, PERMISSIONS, ROLES, type Permission } from './roles.js';

function refusal(roles: Role[], permission: Permission): AppError {
  try {
    authorize({ roles }, permission);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected FORBIDDEN');
}

describe('the permission matrix', () => {
  // Written out, not read from PERMISSIONS: a change to the matrix must change this table too.
  const matrix: [Permission, Role[]][] = [
    ['agents.talk', ['owner', 'admin', 'member']],
    ['apiKeys.own', ['owner', 'admin', 'member']],
    ['agents.manage', ['owner', 'admin']],
    ['knowledge.manage', ['owner', 'admin']],
    ['contacts.manage', ['owner', 'admin']],
    ['audiences.manage', ['owner', 'admin']],
    ['flows.manage', ['owner', 'admin']],
    ['programs.manage', ['owner', 'admin']],
    ['executions.control', ['owner', 'admin']],
    ['teams.manage', ['owner', 'admin']],
    ['telephony.manage', ['owner', 'admin']],
    ['recordings.manage', ['owner', 'admin']],
    ['tools.manage', ['owner', 'admin']],
    ['webhooks.manage', ['owner', 'admin']],
    ['organization.manage', ['owner']],
    ['users.manage', ['owner']],
  ];

  it('names every permission the services guard, and the three roles', () => {
    expect(Object.keys(PERMISSIONS).sort()).toEqual(matrix.map(([permission]) => permission).sort());
    expect(ROLES).toEqual(['owner', 'admin', 'member']);
  });

  it.each(
    matrix.flatMap(([permission, allowed]) => (['owner', 'admin', 'member'] as Role[]).map((role) => [permission, role, allowed.includes(role)] as const)),
  )('%s for an %s: %s', (permission, role, allowed) => {
    expect(can({ roles: [role] }, permission)).toBe(allowed);
    if (allowed) expect(authorize({ roles: [role] }, permission)).toBeUndefined();
    else expect(refusal([role], permission).code).toBe('FORBIDDEN');
  });

  it('grants when any one of several roles may, and nothing without a role', () => {
    expect(can({ roles: ['member', 'owner'] }, 'users.manage')).toBe(true);
    expect(can({ roles: [] }, 'agents.talk')).toBe(false);
    expect(refusal([], 'agents.talk').code).toBe('FORBIDDEN');
  });

  it('says who may and what in the refusal', () => {
    expect(refusal(['member'], 'agents.manage').message).toBe('Only an owner or an admin may create, change, activate or delete agents');
    expect(refusal(['admin'], 'users.manage').message).toBe('Only an owner may add, change or remove users');
    expect(refusal(['member'], 'executions.control').status).toBe(403);
  });
});

describe('permissionsOf', () => {
  it.each(ROLES)('lists exactly what %s may do, in the matrix order', (role) => {
    const expected = (Object.keys(PERMISSIONS) as Permission[]).filter((permission) => (PERMISSIONS[permission].roles as readonly Role[]).includes(role));
    expect(permissionsOf(role)).toEqual(expected);
  });

  it('gives a member only the rows every role has, and the owner every row', () => {
    expect(permissionsOf('member')).toEqual(['agents.talk', 'apiKeys.own']);
    expect(permissionsOf('owner')).toEqual(Object.keys(PERMISSIONS));
    expect(permissionsOf('admin')).not.toContain('users.manage');
  });
});
