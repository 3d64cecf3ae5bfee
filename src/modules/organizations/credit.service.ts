import { listCount } from '../../db/list-counts.js';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { type Page, type JsonPage } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { CreditEntryKind, CreditLedgerEntry } from './credit-ledger.entity.js';
import type { CreditLedgerArgs } from './organization.inputs.js';
import { CREDIT_BALANCE_SQL } from './organization.entity.js';
import { fixedOrderPage } from '../../db/keyset.js';
import { type ListRead, readJsonList, readList, type RowJson } from '../../db/read-model.js';

/** credit_balance is a PostgreSQL integer; a grant never takes it past this. */
export const MAX_BALANCE = 2_147_483_647;
export const MAX_GRANT = 1_000_000_000;

export interface Grant {
  organizationId: string;
  amount: number;
  creditBalance: number;
  ledgerEntryId: string;
}

/** Writes a ledger row in the caller's transaction (`?` placeholders, so both drivers take it). */
export async function recordLedgerEntry(
  em: EntityManager,
  entry: { organizationId: string; kind: CreditEntryKind; amount: number; balanceAfter: number; reason?: string | null; executionId?: string | null },
): Promise<string> {
  const id = randomUUID();
  await em.execute(
    `insert into credit_ledger (id, organization_id, kind, amount, balance_after, reason, execution_id, created_at) values (?, ?, ?, ?, ?, ?, ?, now())`,
    [id, entry.organizationId, entry.kind, entry.amount, entry.balanceAfter, entry.reason ?? null, entry.executionId ?? null],
  );
  return id;
}

/**
 * Credits are what a customer pays for: only the operator grants them (npm run cli -- credits:add),
 * never a caller of the API. Every grant and spend is in the ledger, which the organization reads.
 */
export class CreditService {
  constructor(private readonly em: EntityManager) {}

  /** The operator's grant: the balance and its ledger row in one transaction. */
  async grant(input: { organizationId: string; amount: number; reason?: string | null }): Promise<Grant> {
    const { organizationId, amount } = input;
    if (!isUuid(organizationId)) throw AppError.notFound('Organization');
    if (!Number.isInteger(amount) || amount < 1 || amount > MAX_GRANT) {
      throw AppError.badInput([{ field: 'amount', message: `amount must be an integer from 1 to ${MAX_GRANT}` }]);
    }
    const reason = input.reason?.trim() || null;
    if (reason && reason.length > 500) throw AppError.badInput([{ field: 'reason', message: 'reason must be at most 500 characters' }]);
    return this.em.transactional(async (em) => {
      const [exists] = await em.execute<{ id: string }[]>('select id from organizations where id = ?', [organizationId]);
      if (!exists) throw AppError.notFound('Organization');
      const rows = await em.execute<{ credit_balance: number }[]>(
        `update organizations set credit_balance = credit_balance + ?, updated_at = now()
          where id = ? and credit_balance <= ? returning ${CREDIT_BALANCE_SQL('organizations')} as credit_balance`,
        [amount, organizationId, MAX_BALANCE - amount],
      );
      const row = rows[0];
      if (!row) throw new AppError('CONFLICT', `The credit balance cannot exceed ${MAX_BALANCE}`);
      const creditBalance = Number(row.credit_balance);
      const ledgerEntryId = await recordLedgerEntry(em, { organizationId, kind: CreditEntryKind.grant, amount, balanceAfter: creditBalance, reason });
      return { organizationId, amount, creditBalance, ledgerEntryId };
    });
  }

  /** A page of the caller's ledger, newest first. */
  async ledger(actor: Actor, args: CreditLedgerArgs): Promise<Page<CreditLedgerEntry>> {
    return readList(this.em, this.listRead(actor, args));
  }

  /** The same page as `ledger`, each row as the JSON text `row` builds (the REST door's answer, src/rest/present-sql.ts). */
  async ledgerJson(actor: Actor, args: CreditLedgerArgs, row: RowJson): Promise<JsonPage> {
    return readJsonList(this.em, this.listRead(actor, args), row);
  }

  /** What a page of `ledger` reads. */
  private listRead(actor: Actor, args: CreditLedgerArgs): ListRead<CreditLedgerEntry> {
    return {
      entity: CreditLedgerEntry,
      where: { organization: actor.organizationId, ...(args.kind ? { kind: args.kind } : {}) },
      // Without a kind it is the whole ledger: its size is kept by triggers (list_row_counts), not counted.
      options: {
        ...fixedOrderPage<CreditLedgerEntry>(args, 'createdAt', 'desc'),
        ...(args.kind ? {} : { count: listCount('credit_ledger', actor.organizationId) }),
      },
      page: args.page,
      limit: args.limit,
    };
  }
}
