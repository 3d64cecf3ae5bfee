import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #42: lists that stay fast at a million rows, and segments.
 *
 * - pg_trgm (shipped by PostgreSQL's contrib and loaded into PGlite by its thread, src/db/pglite-thread.ts):
 *   a trigram GIN index per searched column serves the lists' `search` (`ILIKE '%text%'`).
 * - Keyset indexes (organization, sort column, id) for the contacts and audiences orders.
 * - A GIN index with jsonb_path_ops on contacts.attributes serves a segment's equals and in (`@>`).
 * - audiences.kind and filter: a dynamic audience (a segment) is its filter; member_count is kept by
 *   statement-level triggers on audience_members, so neither a page of audiences nor an audience's
 *   members page counts a million memberships.
 * - organization_contact_counts: the number of contacts of each organization, kept the same way, so
 *   the contacts list's total is read, not counted.
 */
export class Migration20261224100000 extends Migration {
  override name = 'Migration20261224100000';

  override up(): void | Promise<void> {
    this.addSql(`create extension if not exists pg_trgm;`);
    const trigram: [string, string][] = [
      ['contacts', 'name'],
      ['contacts', 'phone'],
      ['agents', 'name'],
      ['agents', 'description'],
      ['audiences', 'name'],
      ['audiences', 'description'],
      ['programs', 'name'],
      ['programs', 'description'],
      ['call_flows', 'name'],
      ['call_flows', 'description'],
      ['knowledge_bases', 'name'],
      ['knowledge_bases', 'description'],
    ];
    for (const [table, column] of trigram) {
      this.addSql(`create index "${table}_${column}_trigram_index" on "${table}" using gin ("${column}" gin_trgm_ops);`);
    }
    this.addSql(`create index "contacts_attributes_path_index" on "contacts" using gin ("attributes" jsonb_path_ops);`);
    this.addSql(`create index "contacts_organization_created_at_id_index" on "contacts" ("organization_id", "created_at", "id");`);
    this.addSql(`create index "contacts_organization_name_id_index" on "contacts" ("organization_id", "name", "id");`);
    this.addSql(`create index "audiences_organization_created_at_id_index" on "audiences" ("organization_id", "created_at", "id");`);
    this.addSql(`create index "agents_organization_created_at_id_index" on "agents" ("organization_id", "created_at", "id");`);

    this.addSql(`alter table "audiences" add "kind" text not null default 'static', add "filter" jsonb null, add "member_count" int not null default 0;`);
    this.addSql(
      `alter table "audiences" add constraint "audiences_kind_check" check ("kind" in ('static', 'dynamic') and (("kind" = 'dynamic') = ("filter" is not null)));`,
    );
    this.addSql(`update "audiences" a set "member_count" = (select count(*) from "audience_members" m where m."audience_id" = a."id");`);
    this.addSql(`create function audience_members_counted() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          update audiences a set member_count = a.member_count + n.added
            from (select audience_id, count(*)::int as added from inserted group by audience_id) n where a.id = n.audience_id;
        else
          update audiences a set member_count = a.member_count - n.removed
            from (select audience_id, count(*)::int as removed from deleted group by audience_id) n where a.id = n.audience_id;
        end if;
        return null;
      end $$;`);
    this.addSql(
      `create trigger audience_members_counted_insert after insert on audience_members referencing new table as inserted for each statement execute function audience_members_counted();`,
    );
    this.addSql(
      `create trigger audience_members_counted_delete after delete on audience_members referencing old table as deleted for each statement execute function audience_members_counted();`,
    );

    this.addSql(
      `create table "organization_contact_counts" ("organization_id" uuid not null references "organizations" ("id") on delete cascade, "contacts" int not null default 0, primary key ("organization_id"));`,
    );
    this.addSql(
      `insert into "organization_contact_counts" ("organization_id", "contacts") select "organization_id", count(*) from "contacts" group by "organization_id";`,
    );
    this.addSql(`create function contacts_counted() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into organization_contact_counts as c (organization_id, contacts)
            select organization_id, count(*)::int from inserted group by organization_id
            on conflict (organization_id) do update set contacts = c.contacts + excluded.contacts;
        else
          update organization_contact_counts c set contacts = c.contacts - n.removed
            from (select organization_id, count(*)::int as removed from deleted group by organization_id) n where c.organization_id = n.organization_id;
        end if;
        return null;
      end $$;`);
    this.addSql(
      `create trigger contacts_counted_insert after insert on contacts referencing new table as inserted for each statement execute function contacts_counted();`,
    );
    this.addSql(
      `create trigger contacts_counted_delete after delete on contacts referencing old table as deleted for each statement execute function contacts_counted();`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger contacts_counted_insert on contacts; drop trigger contacts_counted_delete on contacts; drop function contacts_counted();`);
    this.addSql(`drop table "organization_contact_counts";`);
    this.addSql(
      `drop trigger audience_members_counted_insert on audience_members; drop trigger audience_members_counted_delete on audience_members; drop function audience_members_counted();`,
    );
    this.addSql(`alter table "audiences" drop constraint "audiences_kind_check", drop column "kind", drop column "filter", drop column "member_count";`);
    for (const name of [
      'contacts_attributes_path_index',
      'contacts_organization_created_at_id_index',
      'contacts_organization_name_id_index',
      'audiences_organization_created_at_id_index',
      'agents_organization_created_at_id_index',
    ]) {
      this.addSql(`drop index "${name}";`);
    }
    for (const [table, column] of [
      ['contacts', 'name'],
      ['contacts', 'phone'],
      ['agents', 'name'],
      ['agents', 'description'],
      ['audiences', 'name'],
      ['audiences', 'description'],
      ['programs', 'name'],
      ['programs', 'description'],
      ['call_flows', 'name'],
      ['call_flows', 'description'],
      ['knowledge_bases', 'name'],
      ['knowledge_bases', 'description'],
    ]) {
      this.addSql(`drop index "${table}_${column}_trigram_index";`);
    }
  }
}
