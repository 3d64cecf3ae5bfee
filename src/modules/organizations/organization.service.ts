import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { CREDIT_BALANCE_SQL, Organization } from './organization.entity.js';
import type { UpdateOrganizationInput } from './organization.inputs.js';
import { CreditEntryKind } from './credit-ledger.entity.js';
import { recordLedgerEntry } from './credit.service.js';
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

  /**
   * Takes `amount` credits in one conditional UPDATE: true when they were taken, false (and
   * nothing taken) when the credits no runner holds are short. Concurrent spends can never take it
   * below 0. The caller passes its own EntityManager (a transaction, say); the campaign runner pays
   * from its reservations instead (runner/credit-reservations.ts). The ledger row's balanceAfter is
   * the balance a user reads (reservations included), as every other ledger row's.
   */
  async spendCredits(em: EntityManager, organizationId: string, amount: number): Promise<boolean> {
    if (!Number.isInteger(amount) || amount < 1) {
      throw AppError.badInput([{ field: 'amount', message: 'amount must be a positive integer' }]);
    }
    const rows = await em.getConnection().execute<{ credit_balance: number }[]>(
      `update organizations set credit_balance = credit_balance - ?, updated_at = now()
       where id = ? and credit_balance >= ? returning ${CREDIT_BALANCE_SQL('organizations')} as credit_balance`,
      [amount, organizationId, amount],
      'all',
      em.getTransactionContext(),
    );
    const row = rows[0];
    if (!row) return false;
    await recordLedgerEntry(em, { organizationId, kind: CreditEntryKind.spend, amount: -amount, balanceAfter: Number(row.credit_balance) });
    return true;
  }
}
