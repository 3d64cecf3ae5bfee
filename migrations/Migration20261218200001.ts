import { Migration } from '@mikro-orm/migrations';
import { phoneKey } from '../src/modules/contacts/phone-key.js';

/** The rows whose number has a 0 right after a country code: the only ones phoneKey may change. */
const CANDIDATES = `phone ~ '^\\+[0-9]{1,3}0'`;

/**
 * Issue #39 (Info): numbers are stored in one form (src/modules/contacts/phone-key.ts), a trunk 0
 * written after the country code dropped where the country's plan dials it as a trunk prefix, so
 * `+4402071234567` and `+442071234567` are one number on the do-not-call list and in the check before
 * a call. The rows written before are brought to that form: a do-not-call entry whose other form is
 * listed too is the same entry (the one in the kept form stays); a contact whose other form another
 * contact of the organization has keeps its number (two contacts cannot share one); the queued copies
 * of contacts' numbers in executions follow their contacts.
 */
export class Migration20261218200001 extends Migration {
  override name = 'Migration20261218200001';

  override async up(): Promise<void> {
    for (const table of ['do_not_call_entries', 'contacts'] as const) {
      const rows = (await this.execute(`select id, organization_id, phone from "${table}" where ${CANDIDATES}`)) as {
        id: string;
        organization_id: string;
        phone: string;
      }[];
      for (const row of rows) {
        const key = phoneKey(row.phone);
        if (key === row.phone) continue;
        const [taken] = await this.execute(`select id from "${table}" where organization_id = ? and phone = ?`, [row.organization_id, key]);
        if (!taken) await this.execute(`update "${table}" set phone = ? where id = ?`, [key, row.id]);
        else if (table === 'do_not_call_entries') await this.execute(`delete from "do_not_call_entries" where id = ?`, [row.id]);
      }
    }
    await this.execute(
      `update "execution_contacts" ec set phone = c.phone from "contacts" c where c.id = ec.contact_id and ec.${CANDIDATES} and ec.phone <> c.phone`,
    );
  }

  override down(): void | Promise<void> {
    // The numbers' earlier forms are not kept: they were the same numbers.
  }
}
