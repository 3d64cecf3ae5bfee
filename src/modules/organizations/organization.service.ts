import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { Organization } from './organization.entity.js';
import type { AddCreditsInput, UpdateOrganizationInput } from './organization.inputs.js';
import { authorize } from './roles.js';

/** credit_balance is a PostgreSQL integer; a top-up never takes it past this. */
const MAX_BALANCE = 2_147_483_647;

/** The caller's own organization and its credit balance. */
export class OrganizationService {
  constructor(private readonly em: EntityManager) {}

  /** Read fresh: the balance moves through SQL updates the identity map does not see. */
  async get(actor: Actor): Promise<Organization> {
    const organization = await this.em.findOne(Organization, { id: actor.organizationId }, { refresh: true });
    if (!organization) throw AppError.notFound('Organization');
    return organization;
  }

  /** Owner or admin only. */
  async update(actor: Actor, input: UpdateOrganizationInput): Promise<Organization> {
    authorize(actor, 'organization.manage');
    const organization = await this.get(actor);
    organization.name = input.name;
    organization.updatedAt = new Date();
    await this.em.flush();
    return organization;
  }

  /** Owner or admin only; one atomic UPDATE, so concurrent top-ups and spends all count. */
  async addCredits(actor: Actor, input: AddCreditsInput): Promise<Organization> {
    const rows = await this.em.getConnection().execute<{ credit_balance: number }[]>(
      `update organizations set credit_balance = credit_balance + ?, updated_at = now()
       where id = ? and credit_balance <= ? returning credit_balance`,
      [input.amount, actor.organizationId, MAX_BALANCE - input.amount],
      'all',
      this.em.getTransactionContext(),
    );
    if (rows.length === 0) throw new AppError('CONFLICT', `The credit balance cannot exceed ${MAX_BALANCE}`);
    return this.get(actor);
  }

  /**
   * Takes `amount` credits in one conditional UPDATE: true when they were taken, false (and
   * nothing taken) when the balance is short. Concurrent spends can never take it below 0.
   * For the campaign runner, which passes its own EntityManager (a transaction, say).
   */
  async spendCredits(em: EntityManager, organizationId: string, amount: number): Promise<boolean> {
    if (!Number.isInteger(amount) || amount < 1) {
      throw AppError.badInput([{ field: 'amount', message: 'amount must be a positive integer' }]);
    }
    const rows = await em.getConnection().execute<{ credit_balance: number }[]>(
      `update organizations set credit_balance = credit_balance - ?, updated_at = now()
       where id = ? and credit_balance >= ? returning credit_balance`,
      [amount, organizationId, amount],
      'all',
      em.getTransactionContext(),
    );
    return rows.length > 0;
  }
}
