import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AudienceKind, type Audience } from './audience.entity.js';
import { compileSegmentFilter, type SegmentFilter } from './segment-filter.js';

// Who is a member of an audience, as SQL over a contacts row: a static audience's memberships, or a
// dynamic audience's filter. The members page, the count, an execution's snapshot and a live program's
// triggers all ask here, so a segment's members are the same contacts wherever they are read.

/** What membership depends on: the audience's id, kind and filter. */
export type AudienceSource = Pick<Audience, 'id' | 'kind' | 'filter'>;

/** A condition over the contacts row `alias` (the caller scopes it to the organization), keyed by its SQL's shape. */
export interface MemberCondition {
  key: string;
  sql(alias: string): string;
  params: unknown[];
}

export function memberCondition(audience: AudienceSource): MemberCondition {
  if (audience.kind !== AudienceKind.dynamic || !audience.filter) {
    return {
      key: 'members|static',
      sql: (alias) => `exists (select 1 from audience_members m where m.audience_id = ? and m.contact_id = ${alias}."id")`,
      params: [audience.id],
    };
  }
  const filter = audience.filter;
  const { sql, params } = compileSegmentFilter(filter, '@@contact@@');
  return {
    key: `members|segment|${createHash('sha256').update(sql).digest('base64url')}`,
    sql: (alias) => sql.replaceAll('@@contact@@', alias),
    params,
  };
}

/** The number of members as one scalar SQL: the kept count of a static audience, the filter's matches of a dynamic one. */
export function memberCountSql(audience: AudienceSource, organizationId: string): { key: string; sql: string; params: unknown[] } {
  if (audience.kind !== AudienceKind.dynamic || !audience.filter) {
    return { key: 'count|static', sql: 'select a.member_count from audiences a where a.id = ?', params: [audience.id] };
  }
  const condition = memberCondition(audience);
  return {
    key: `count|${condition.key}`,
    sql: `select count(*)::int from contacts y where y.organization_id = ? and ${condition.sql('y')}`,
    params: [organizationId, ...condition.params],
  };
}

/** Sets the live contactCount of the dynamic audiences among `audiences` (read objects or managed), one count each. */
export async function withLiveCounts<A extends Audience>(em: EntityManager, organizationId: string, audiences: A[]): Promise<A[]> {
  await Promise.all(
    audiences
      .filter((audience) => audience.kind === AudienceKind.dynamic && audience.filter)
      .map(async (audience) => {
        audience.contactCount = await liveCount(em, organizationId, audience);
      }),
  );
  return audiences;
}

/** How many contacts of the organization are members of `audience` now: memberCountSql, run. */
export async function liveCount(em: EntityManager, organizationId: string, audience: AudienceSource): Promise<number> {
  const count = memberCountSql(audience, organizationId);
  const [row] = await em.execute<{ n: number }[]>(`select (${count.sql}) as n`, count.params as never[]);
  return Number(row?.n ?? 0);
}

/** How many contacts of the organization `filter` (already valid) matches now: the count a segment with it would read. */
export function filterCount(em: EntityManager, organizationId: string, filter: SegmentFilter): Promise<number> {
  return liveCount(em, organizationId, { id: '', kind: AudienceKind.dynamic, filter });
}

/** The kind and filter of an audience of the organization (null when there is none), for the statements above. */
export async function audienceSource(em: EntityManager, organizationId: string, audienceId: string): Promise<AudienceSource | null> {
  return (await audienceSources(em, organizationId, [audienceId])).get(audienceId) ?? null;
}

/** audienceSource of each of `audienceIds`, in one statement; ids of no audience of the organization are left out. */
export async function audienceSources(em: EntityManager, organizationId: string, audienceIds: readonly string[]): Promise<Map<string, AudienceSource>> {
  if (audienceIds.length === 0) return new Map();
  const rows = await em.execute<{ id: string; kind: string; filter: SegmentFilter | string | null }[]>(
    `select id, kind, filter from audiences where organization_id = ? and id in (${audienceIds.map(() => '?').join(', ')})`,
    [organizationId, ...audienceIds],
  );
  const byId = new Map<string, AudienceSource>();
  for (const row of rows) {
    const filter = typeof row.filter === 'string' ? (JSON.parse(row.filter) as SegmentFilter) : row.filter;
    byId.set(row.id, { id: row.id, kind: row.kind as AudienceKind, filter });
  }
  // Asked for with capitals (UUIDs are case-blind): found under the spelling asked.
  return new Map(audienceIds.flatMap((id) => (byId.has(id.toLowerCase()) ? [[id, byId.get(id.toLowerCase())!] as const] : [])));
}
