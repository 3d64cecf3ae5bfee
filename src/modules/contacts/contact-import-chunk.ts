import { randomUUID } from 'node:crypto';
import { setImmediate as turn } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { query, queryBound } from '../../db/sql.js';
import { EventWriter } from '../events/event-writer.js';
import type { ImportRow, RefusedRow } from './contact-import-rows.js';

/** Rows per transaction, as the JSON import writes them (organization-imports.ts): other statements run between two. */
export const IMPORT_JOB_CHUNK = 500;
/** A running import whose lease is older than this has lost its process: another worker claims it and resumes at rowsRead. */
export const IMPORT_JOB_LEASE_MS = 60_000;

/** A job as its worker claimed it. */
export interface ClaimedImport {
  id: string;
  organization_id: string;
  mode: 'create' | 'upsert' | 'skip';
  key: 'phone' | 'externalId';
  audience_id: string | null;
  rows_read: number;
}

interface Existing {
  id: string;
  phone: string;
  external_id: string | null;
  import_id: string | null;
}

/**
 * What a chunk's rows meet in the database, in one statement: the contacts of its phones (`phone`),
 * of its externalIds (`externalId`) and its phones on the do-not-call list (`doNotCall`), each key
 * looked up on its own in its unique index (`lateral … limit 1`: one index probe a key, whatever the
 * statistics say). A join of the chunk's keys to the organization's contacts is planned on the
 * statistics of organization_id, and those of an organization whose contacts the import is writing
 * are stale (a new organization's list: a few contacts, as the planner sees it): PostgreSQL then read
 * every contact of the organization for each chunk (a hash join), so the import slowed as it went
 * (seconds a chunk at 100,000 contacts; 1,117 rows/s over a million). With `limit 1` the plan is a
 * probe per key: the unique btree answers one row, where pg_trgm's GIN index on contacts.phone (which
 * also answers `=`, 14 ms a number) or the organization's index would first read many.
 */
const MET = `select 'phone' as met, c.id, c.phone, c.external_id, c.import_id from jsonb_array_elements_text(?::jsonb) as k(value)
    cross join lateral (select id, phone, external_id, import_id from contacts where organization_id = ? and phone = k.value limit 1) c
  union all
  select 'externalId', c.id, c.phone, c.external_id, c.import_id from jsonb_array_elements_text(?::jsonb) as k(value)
    cross join lateral (select id, phone, external_id, import_id from contacts where organization_id = ? and external_id = k.value limit 1) c
  union all
  select 'doNotCall', null::uuid, d.phone, null::varchar, null::uuid from jsonb_array_elements_text(?::jsonb) as k(value)
    cross join lateral (select phone from do_not_call_entries where organization_id = ? and phone = k.value limit 1) d`;

/**
 * What a chunk learns of the chunk before it while both are written at once (PostgreSQL: the worker's
 * two lanes). The worker starts a chunk beside the one before it only when no phone or externalId is in
 * both (a chunk with a key of the one before it waits for it, as it would be decided against it).
 */
export interface ChunkBefore {
  /** The ids of the contacts its look-up found (every contact it may update), once it has looked up. */
  found: Promise<ReadonlySet<string>>;
  /** Resolves when it has committed (true) or ended writing nothing (false); rejects (ChunkBeforeFailed, ChunkBeforeRetried) otherwise. */
  committed(): Promise<boolean>;
}

/** Thrown inside a chunk's transaction to roll it back: the job is no longer running here (writeImportChunk answers false). */
export class ChunkNotWritten extends Error {}

/** What `ChunkBefore.committed` rejects with when the chunk before failed: this one is rolled back, never committed ahead of it. */
export class ChunkBeforeFailed extends Error {}

/**
 * What `ChunkBefore.committed` rejects with when the chunk before is decided again (a contact made
 * meanwhile with one of its keys): this one rolls back, releasing what the new decision may need, and
 * is written again after it.
 */
export class ChunkBeforeRetried extends Error {}

/** The job's counts as its events carry them. */
export const COUNTS_SQL = `id, status, rows_read as "rowsRead", imported, updated, skipped, refused, do_not_call as "doNotCall", error`;

/**
 * One chunk of an import in the caller's transaction: its rows decided against the contacts there
 * (created, updated, skipped or refused), written with their refusals and the job's counts and
 * rows_read; false when the job is no longer running (cancelled): nothing is written (a cancel that
 * comes while the chunk is written rolls it back, ChunkNotWritten).
 *
 * `before`, the chunk before it when the two are written at once, orders them as if one after the
 * other. A contact the look-up finds that the one before it may update (`before.found`): this one
 * waits for its commit and looks up again, so nothing it decides on is changed under it, and the
 * two never wait for each other's rows. Its contacts, updates and refusals are written beside the
 * one before it; then it waits for that one's commit before the rest, which is written in order: the
 * job's counts and rows_read (which a resume reads, so they only ever count whole chunks of the start
 * of the file), the organization's count of contacts (`gateway.contacts_counted_by_caller`: the
 * insert trigger's one row would otherwise be locked by the first insert until its commit, and the
 * second chunk wait for it while holding what the first may need), the audience's members and the event.
 * `onFound` hears this chunk's own found ids, for the chunk after it.
 */
export async function writeImportChunk(
  em: EntityManager,
  job: ClaimedImport,
  rows: (ImportRow | RefusedRow)[],
  progress: boolean,
  before?: ChunkBefore,
  onFound?: (ids: ReadonlySet<string>) => void,
): Promise<boolean> {
  const [held] = await query<{ status: string }>(
    em,
    `select status, set_config('gateway.contacts_counted_by_caller', 'on', true) from contact_imports where id = ?`,
    [job.id],
  );
  if (held?.status !== 'running') return false;
  const refused: RefusedRow[] = [];
  const good: ImportRow[] = [];
  for (const row of rows) {
    if ('reason' in row) refused.push(row);
    else good.push(row);
  }
  const org = job.organization_id;
  const phones = JSON.stringify([...new Set(good.map((row) => row.phone))]);
  const externalIds = JSON.stringify([...new Set(good.flatMap((row) => (row.externalId ? [row.externalId] : [])))]);
  const byPhone = new Map<string, Existing>();
  const byExternal = new Map<string, Existing>();
  const suppressed = new Set<string>();
  const foundIds = new Set<string>();
  for (;;) {
    if (good.length > 0) {
      for (const found of await queryBound<Existing & { met: 'phone' | 'externalId' | 'doNotCall' }>(em, MET, [phones, org, externalIds, org, phones, org])) {
        if (found.met === 'phone') byPhone.set(found.phone, found);
        else if (found.met === 'externalId') byExternal.set(found.external_id!, found);
        else suppressed.add(found.phone);
        if (found.id) foundIds.add(found.id);
      }
    }
    if (!before) break;
    const theirs = await before.found;
    if (![...foundIds].some((id) => theirs.has(id))) break;
    // A contact the chunk before this one may change: decided after it, on what it wrote.
    if (!(await before.committed())) return false;
    before = undefined;
    byPhone.clear();
    byExternal.clear();
    suppressed.clear();
    foundIds.clear();
  }
  onFound?.(foundIds);
  const creates: Record<string, unknown>[] = [];
  const updates: Record<string, unknown>[] = [];
  const members: string[] = [];
  let skipped = 0;
  let doNotCall = 0;
  const seenKey = new Map<string, number>();
  const seenPhone = new Map<string, number>();
  const refuse = (row: ImportRow, reason: string) => refused.push({ row: row.row, reason, cells: row.cells });
  for (const row of good) {
    const keyValue = job.key === 'phone' ? row.phone : row.externalId;
    if (keyValue === null) {
      refuse(row, 'externalId is empty (the import is keyed on externalId)');
      continue;
    }
    const repeat = seenKey.get(keyValue) ?? (job.key === 'phone' ? undefined : seenPhone.get(row.phone));
    if (repeat !== undefined) {
      refuse(row, `${job.key === 'phone' || seenKey.has(keyValue) ? job.key : 'phone'} repeats row ${repeat}`);
      continue;
    }
    const existing = job.key === 'phone' ? byPhone.get(row.phone) : byExternal.get(keyValue);
    if (existing?.import_id === job.id) {
      refuse(row, `${job.key} repeats an earlier row of the file`);
      continue;
    }
    // Keyed on externalId, the row's phone may belong to another contact.
    const phoneOwner = byPhone.get(row.phone);
    if (job.key === 'externalId' && phoneOwner && phoneOwner.id !== existing?.id && (existing || job.mode !== 'skip')) {
      refuse(row, `phone ${row.phone} belongs to another contact (${phoneOwner.id})`);
      continue;
    }
    seenKey.set(keyValue, row.row);
    seenPhone.set(row.phone, row.row);
    if (existing) {
      if (job.mode === 'create') refuse(row, `a contact with this ${job.key} already exists (${existing.id})`);
      else if (job.mode === 'skip') skipped++;
      else {
        const dnc = suppressed.has(row.phone);
        if (dnc) doNotCall++;
        updates.push({ id: existing.id, organization_id: org, phone: row.phone, name: row.name, time_zone: row.timeZone, attributes: row.attributes, dnc });
        members.push(existing.id);
      }
      continue;
    }
    const dnc = suppressed.has(row.phone);
    if (dnc) doNotCall++;
    const id = randomUUID();
    creates.push({ id, phone: row.phone, external_id: row.externalId, name: row.name, time_zone: row.timeZone, attributes: row.attributes, opted_out: dnc });
    members.push(id);
  }
  if (creates.length > 0) {
    await queryBound(
      em,
      `insert into contacts (id, created_at, updated_at, organization_id, external_id, import_id, name, phone, time_zone, attributes, opted_out)
       select r.id, now(), now(), ?::uuid, r.external_id, ?::uuid, r.name, r.phone, r.time_zone, r.attributes, r.opted_out
         from jsonb_to_recordset(?::jsonb) as r(id uuid, external_id text, name text, phone text, time_zone text, attributes jsonb, opted_out boolean)`,
      [org, job.id, JSON.stringify(creates)],
    );
  }
  if (updates.length > 0) {
    // The cells given overwrite; attributes merge; a number on the do-not-call list opts the contact out. Each
    // row carries the organization (`r.organization_id`): compared to a constant (`c.organization_id = ?`), it
    // would be planned on the organization's statistics, stale as MET says, and every contact read a chunk.
    await queryBound(
      em,
      `update contacts c set updated_at = now(), import_id = ?::uuid, phone = r.phone, name = coalesce(r.name, c.name),
         time_zone = coalesce(r.time_zone, c.time_zone), attributes = c.attributes || r.attributes, opted_out = c.opted_out or r.dnc
         from jsonb_to_recordset(?::jsonb) as r(id uuid, organization_id uuid, phone text, name text, time_zone text, attributes jsonb, dnc boolean)
        where c.id = r.id and c.organization_id = r.organization_id`,
      [job.id, JSON.stringify(updates)],
    );
  }
  if (refused.length > 0) {
    await queryBound(
      em,
      `insert into contact_import_refusals (import_id, row_number, reason, cells)
       select ?::uuid, r.row_number, r.reason, r.cells from jsonb_to_recordset(?::jsonb) as r(row_number int, reason text, cells jsonb)
       on conflict do nothing`,
      [job.id, JSON.stringify(refused.map((row) => ({ row_number: row.row, reason: row.reason, cells: row.cells })))],
    );
  }
  // The rest in order: after the chunk before this one committed.
  if (before && !(await before.committed())) throw new ChunkNotWritten();
  const [counts] = await query<Record<string, unknown>>(
    em,
    `update contact_imports set rows_read = rows_read + ?, imported = imported + ?, updated = updated + ?, skipped = skipped + ?,
       refused = refused + ?, do_not_call = do_not_call + ?, lease_until = now() + ? * interval '1 millisecond', updated_at = now()
      where id = ? and status = 'running' returning ${COUNTS_SQL}`,
    [rows.length, creates.length, updates.length, skipped, refused.length, doNotCall, IMPORT_JOB_LEASE_MS, job.id],
  );
  if (!counts) throw new ChunkNotWritten();
  if (creates.length > 0) {
    await query(
      em,
      `insert into organization_contact_counts as c (organization_id, contacts) values (?, ?)
       on conflict (organization_id) do update set contacts = c.contacts + excluded.contacts`,
      [org, creates.length],
    );
  }
  if (job.audience_id && members.length > 0) {
    await queryBound(
      em,
      `insert into audience_members (id, created_at, updated_at, organization_id, audience_id, contact_id)
       select gen_random_uuid(), now(), now(), a.organization_id, a.id, m.id::uuid
         from audiences a, jsonb_array_elements_text(?::jsonb) as m(id)
        where a.id = ?::uuid and a.organization_id = ?::uuid
       on conflict (audience_id, contact_id) do nothing`,
      [JSON.stringify(members), job.audience_id, org],
    );
  }
  if (progress) await EventWriter.write(em, { organizationId: org, type: 'import.progress', payload: counts });
  return true;
}

/** Deletes the contacts an import created, a chunk per statement (their memberships go with them): a failed create import's end. */
export async function undoCreated(em: EntityManager, organizationId: string, importId: string): Promise<void> {
  for (;;) {
    const gone = await query(
      em,
      `delete from contacts where id in (select id from contacts where organization_id = ? and import_id = ? limit ?) returning id`,
      [organizationId, importId, IMPORT_JOB_CHUNK],
    );
    if (gone.length < IMPORT_JOB_CHUNK) return;
    await turn();
  }
}

/**
 * One chunk of a cancelled create import's undo, in the caller's transaction: at most IMPORT_JOB_CHUNK of
 * the contacts it created deleted (their memberships go with them) and `imported` counted down by as
 * many, the lease renewed, an import.progress event when `progress`; the last chunk (fewer) ends the
 * job `cancelled` (import.cancelled). The count deleted, or null when the job is no
 * longer `cancelling` here. A stop between two chunks loses nothing: the next claim deletes what is left.
 */
export async function undoImportChunk(em: EntityManager, importId: string, progress: boolean): Promise<number | null> {
  const [held] = await query<{ status: string; organization_id: string }>(em, `select status, organization_id from contact_imports where id = ? for update`, [
    importId,
  ]);
  if (held?.status !== 'cancelling') return null;
  const gone = await query(em, `delete from contacts where id in (select id from contacts where organization_id = ? and import_id = ? limit ?) returning id`, [
    held.organization_id,
    importId,
    IMPORT_JOB_CHUNK,
  ]);
  const done = gone.length < IMPORT_JOB_CHUNK;
  const [counts] = await query<Record<string, unknown>>(
    em,
    `update contact_imports set imported = case when ? then 0 else greatest(imported - ?, 0) end, updated_at = now(),
       status = case when ? then 'cancelled' else status end, finished_at = case when ? then now() else finished_at end,
       lease_until = case when ? then null else now() + ? * interval '1 millisecond' end
      where id = ? returning ${COUNTS_SQL}`,
    [done, gone.length, done, done, done, IMPORT_JOB_LEASE_MS, importId],
  );
  if (done || progress)
    await EventWriter.write(em, { organizationId: held.organization_id, type: done ? 'import.cancelled' : 'import.progress', payload: counts! });
  return gone.length;
}
