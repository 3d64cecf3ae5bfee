import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../common/errors.js';
import { isoDateSql } from '../../db/read-model.js';
import { query } from '../../db/sql.js';

/**
 * Rows an import writes per statement, each chunk in a transaction of its own: on the embedded
 * database (one session) other statements run between two chunks, so no import holds it for more
 * than one chunk's write (docs/operating.md).
 */
export const IMPORT_CHUNK = 500;
/** An import whose heartbeat is older than this has lost its process: it is undone and its place freed. */
export const IMPORT_LEASE_MS = 60_000;

export type ImportKind = 'contacts' | 'do-not-call';

/** What the import's work is handed: beat the heartbeat in each chunk's transaction, then say it committed. */
export interface ImportSlot {
  /**
   * In each chunk's transaction. `last`: this chunk ends the import, and frees its place in the same
   * transaction, so from its commit on nothing of the import is undone.
   */
  heartbeat(em: EntityManager, last: boolean): Promise<void>;
  /** After each chunk's commit: `rows` more are written (contacts: undone if a later chunk fails). */
  committed(rows: number): void;
}

/** PostgreSQL's text form of a uuid[]: ids need no quoting. */
function uuidArray(ids: readonly string[]): string {
  return `{${ids.join(',')}}`;
}

/**
 * One import per organization at a time, across every replica: the running import holds its
 * organization's row of `organization_imports`, taken with one INSERT … ON CONFLICT DO NOTHING
 * before anything is read or written, so of two imports sent at once exactly one gets it and the
 * other answers 409 naming it. A contact import lists the ids it is about to write in that row: if it
 * fails after writing some, they are deleted before it answers; if its process dies, whoever finds the
 * row with a stale heartbeat (the organization's next import, the runner's tick, the embedded
 * database's next start) deletes them. So the answer stays all or nothing without one transaction
 * holding the database for the whole file.
 */
export class OrganizationImports {
  constructor(private readonly em: EntityManager) {}

  /** Runs `work` holding the organization's import place; `contactIds`: the contacts it will write (undone if it fails). */
  async run<T>(organizationId: string, kind: ImportKind, contactIds: readonly string[] | null, work: (slot: ImportSlot) => Promise<T>): Promise<T> {
    const token = randomUUID();
    await this.take(organizationId, token, kind, contactIds);
    let written = 0;
    let ending = false;
    let freed = false;
    const slot: ImportSlot = {
      async heartbeat(em, last) {
        const held = await query(
          em,
          last
            ? 'delete from organization_imports where organization_id = ? and token = ? returning token'
            : 'update organization_imports set heartbeat_at = now() where organization_id = ? and token = ? returning token',
          [organizationId, token],
        );
        // Its heartbeat was stale long enough for its place to be freed and what it wrote deleted.
        if (held.length === 0) throw new AppError('UNAVAILABLE', 'The import stalled for longer than its lease and was undone; send it again');
        ending = last;
      },
      committed(rows) {
        written += rows;
        freed = ending;
      },
    };
    // Kept when what the import wrote could not be deleted now: recover() deletes it later.
    let keep = false;
    try {
      return await work(slot);
    } catch (error) {
      if (contactIds && written > 0 && !freed)
        keep = !(await this.undoContacts(organizationId, contactIds).then(
          () => true,
          () => false,
        ));
      throw error;
    } finally {
      if (!keep && !freed)
        await query(this.unbound(), 'delete from organization_imports where organization_id = ? and token = ?', [organizationId, token]).catch(() => undefined);
    }
  }

  /**
   * An entity manager of no request: what cleans up after an import runs even when the request's
   * deadline has passed (its own statements are refused from then on).
   */
  private unbound(): EntityManager {
    return this.em.fork({ disableContextResolution: true });
  }

  /**
   * Undoes the imports whose process is gone: every one held (`all`, the embedded database's start:
   * its one process is this one) or those whose heartbeat is older than the lease. Answers how many.
   */
  async recover(options: { all?: boolean } = {}): Promise<number> {
    const stale = await query<{ organization_id: string; token: string; contact_ids: string[] | string | null }>(
      this.em,
      `select organization_id, token, contact_ids from organization_imports where ? or heartbeat_at < now() - ? * interval '1 millisecond'`,
      [options.all === true, IMPORT_LEASE_MS],
    );
    for (const row of stale) await this.release(row.organization_id, row.token, row.contact_ids);
    return stale.length;
  }

  private async take(organizationId: string, token: string, kind: ImportKind, contactIds: readonly string[] | null): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const taken = await query(
        this.em,
        `insert into organization_imports (organization_id, token, kind, started_at, heartbeat_at, contact_ids)
         values (?, ?, ?, now(), now(), ?::uuid[]) on conflict (organization_id) do nothing returning organization_id`,
        [organizationId, token, kind, contactIds ? uuidArray(contactIds) : null],
      );
      if (taken.length > 0) return;
      const [holder] = await query<{ token: string; kind: string; started_at: string; stale: boolean; contact_ids: string[] | string | null }>(
        this.em,
        `select token, kind, ${isoDateSql('started_at')} as started_at, heartbeat_at < now() - ? * interval '1 millisecond' as stale, contact_ids
           from organization_imports where organization_id = ?`,
        [IMPORT_LEASE_MS, organizationId],
      );
      if (holder?.stale && attempt === 0) {
        await this.release(organizationId, holder.token, holder.contact_ids);
        continue;
      }
      if (!holder && attempt === 0) continue; // it ended between the two statements
      const since = holder?.started_at ?? 'just now';
      throw new AppError(
        'CONFLICT',
        `An import is already running for this organization (${holder?.kind ?? kind}, started ${since}); one import runs at a time: send this one when it has finished`,
      );
    }
  }

  /**
   * Frees a dead import's place and deletes what it wrote, in one transaction: a holder still alive after
   * all finds its place gone at its next heartbeat and stops. Rare (a crash), so it may hold the
   * database for the deletes.
   */
  private async release(organizationId: string, token: string, contactIds: string[] | string | null): Promise<void> {
    const ids = typeof contactIds === 'string' ? parseUuidArray(contactIds) : (contactIds ?? []);
    await this.em.transactional(async (em) => {
      const freed = await query(em, 'delete from organization_imports where organization_id = ? and token = ? returning token', [organizationId, token]);
      if (freed.length > 0) await this.undoContacts(organizationId, ids, em);
    });
  }

  /** Deletes the import's contacts, a chunk per statement (their memberships go with them). */
  private async undoContacts(organizationId: string, ids: readonly string[], em = this.unbound()): Promise<void> {
    for (let start = 0; start < ids.length; start += IMPORT_CHUNK) {
      await query(em, 'delete from contacts where organization_id = ? and id = any(?::uuid[])', [
        organizationId,
        uuidArray(ids.slice(start, start + IMPORT_CHUNK)),
      ]);
    }
  }
}

/** A uuid[] as a driver that does not parse arrays gives it: `{a,b}`. */
function parseUuidArray(text: string): string[] {
  return text
    .replace(/^\{|\}$/g, '')
    .split(',')
    .filter(Boolean);
}

/**
 * The campaign runner's onTick hook that undoes imports whose process died (another replica's), once a
 * lease at most: what such an import wrote stays visible until then, or until the organization's next
 * import finds its place stale.
 */
export function importRecoveryHook(imports: OrganizationImports): (now: Date) => Promise<void> {
  let last = 0;
  return async (now) => {
    if (now.getTime() - last < IMPORT_LEASE_MS) return;
    last = now.getTime();
    await imports.recover();
  };
}
