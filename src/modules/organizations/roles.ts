import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';

/** Owners and admins manage the organization, its teams and its credits; members only read. */
export function requireManager(actor: Actor, action: string): void {
  if (!actor.roles.some((role) => role === 'owner' || role === 'admin')) {
    throw new AppError('FORBIDDEN', `Only an owner or an admin may ${action}`);
  }
}
