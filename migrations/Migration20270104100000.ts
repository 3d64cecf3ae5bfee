import { Migration } from '@mikro-orm/migrations';

const COUNTED = (skippable: boolean) => `create or replace function contacts_counted() returns trigger language plpgsql as $$
      begin
        ${
          skippable
            ? `if tg_op = 'INSERT' and current_setting('gateway.contacts_counted_by_caller', true) = 'on' then
          return null;
        end if;
        `
            : ''
        }if tg_op = 'INSERT' then
          insert into organization_contact_counts as c (organization_id, contacts)
            select organization_id, count(*)::int from inserted group by organization_id
            on conflict (organization_id) do update set contacts = c.contacts + excluded.contacts;
        else
          update organization_contact_counts c set contacts = c.contacts - n.removed
            from (select organization_id, count(*)::int as removed from deleted group by organization_id) n where c.organization_id = n.organization_id;
        end if;
        return null;
      end $$;`;

/**
 * Issue #42, a CSV import at 20,000 rows/s on PostgreSQL: two chunks of one import are written at once
 * (src/modules/contacts/contact-import-chunk.ts), and the count of an organization's contacts, which the
 * insert trigger of Migration20261224100000 keeps in one row a organization, would make the second
 * chunk's insert wait for the first chunk's commit (the row's lock) while the first waits in order for
 * nothing of the second's: a transaction that sets `gateway.contacts_counted_by_caller` to `on` (for
 * itself only, `set_config(…, true)`) counts its inserted contacts itself, after the chunk before it
 * committed. Every other insert, and every delete, is counted by the trigger as before.
 */
export class Migration20270104100000 extends Migration {
  override name = 'Migration20270104100000';

  override up(): void | Promise<void> {
    this.addSql(COUNTED(true));
  }

  override down(): void | Promise<void> {
    this.addSql(COUNTED(false));
  }
}
