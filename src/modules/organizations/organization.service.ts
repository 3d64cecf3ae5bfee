import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { Organization } from './organization.entity.js';
import type { UpdateOrganizationInput } from './organization.inputs.js';
import { authorize } from './roles.js';

export const OPERATOR_GRANTS = 'Credits are granted by the operator: npm run cli -- credits:add --org <organizationId> --amount <n>';

/** The caller's own organization and its credit balance. */
export class OrganizationService {
  constructor(private readonly em: EntityManager) {}

  /** Read fresh: the balance moves through SQL updates the identity map does not see. */
  async get(actor: Actor): Promise<Organization> {
    const organization = await this.em.findOne(Organization, { id: actor.organizationId }, { refresh: true });
    if (!organization) throw AppError.notFound('Organization');
    return organization;
  }

  /** Owner only; the fields sent change, the others stay. */
  async update(actor: Actor, input: UpdateOrganizationInput): Promise<Organization> {
    authorize(actor, 'organization.manage');
    const organization = await this.get(actor);
    if (input.name !== undefined) organization.name = input.name;
    if (input.recordingRetentionDays !== undefined) organization.recordingRetentionDays = input.recordingRetentionDays;
    if (input.webCallOrigins !== undefined) organization.webCallOrigins = [...new Set(input.webCallOrigins)];
    organization.updatedAt = new Date();
    await this.em.flush();
    return organization;
  }

  /**
   * The old self-service top-up: credits are what a customer pays for, so only the operator grants
   * them (CreditService.grant, run by `npm run cli -- credits:add`). Every caller gets 403.
   */
  addCredits(_actor: Actor): never {
    throw new AppError('FORBIDDEN', OPERATOR_GRANTS);
  }
}
