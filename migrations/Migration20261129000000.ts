import { Migration } from '@mikro-orm/migrations';

/**
 * Live events: every committed event is announced on the `gateway_events` channel, whichever path
 * wrote it (EventWriter.write's raw SQL or an ORM flush), by an AFTER INSERT trigger. NOTIFY is sent
 * only when the transaction commits, so a rolled-back event is never announced. The payload names the
 * event (id, organization, type, createdAt) and never carries its data: NOTIFY is small (8000 bytes)
 * and any session of the database may LISTEN; a subscriber reads the row, scoped to its organization.
 */
export class Migration20261129000000 extends Migration {
  override name = 'Migration20261129000000';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function gateway_events_notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('gateway_events', json_build_object('id', new.id, 'organizationId', new.organization_id, 'type', new.type, 'createdAt', new.created_at)::text);
  return null;
end
$$;`);
    this.addSql(`create trigger events_notify after insert on "events" for each row execute function gateway_events_notify();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists events_notify on "events";`);
    this.addSql(`drop function if exists gateway_events_notify();`);
  }
}
