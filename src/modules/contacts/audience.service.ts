import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { nameOrDescriptionMatch, containsPattern, pageMeta, PageArgs, sortField, type JsonPage, type Page } from '../../common/pagination.js';
import { validArgs } from '../../common/validation.js';
import { nestedRelation, readPageWith, relationKey, WHOLE_ROWS, type PageSelection } from '../../db/nested-relation.js';
import { sortedPage } from '../../db/keyset.js';
import { preload, readJsonList, readList, type ListRead, type RowJson } from '../../db/read-model.js';
import { isUuid } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { Audience, AudienceKind, AudienceMember } from './audience.entity.js';
import { audienceSource, audienceSources, filterCount, memberCondition, memberCountSql, withLiveCounts, type AudienceSource } from './segments.js';
import type { AudienceMembersInput, CreateAudienceInput, SegmentPreviewInput, UpdateAudienceInput } from './audience.inputs.js';
import { CONTACT_SORT_FIELDS } from './contact.service.js';
import { Contact } from './contact.entity.js';
import { authorize } from '../organizations/roles.js';

export const AUDIENCE_SORT_FIELDS = ['createdAt', 'updatedAt', 'name', 'contactCount'] as const;
const CONTACT_COLUMNS: Record<(typeof CONTACT_SORT_FIELDS)[number], string> = {
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  name: 'name',
  phone: 'phone',
};

/**
 * Audience.contacts: a page of an audience's members, read with an audiences page when its selection
 * asks for them, else batched by membersOf (the same join, search, order and scope).
 */
export const audienceMembers = nestedRelation<PageArgs>({
  parent: Audience,
  field: 'contacts',
  entity: Contact,
  shape: 'page',
  argNames: ['page', 'limit', 'search', 'sortBy', 'sortOrder'],
  // A cursor's page is read by the keyset (membersOf), not by the per-parent OFFSET of this subquery.
  readArgs: async (raw) => (raw.cursor ? null : validArgs(PageArgs, raw)),
  source(parent, organizationId, args) {
    const column = CONTACT_COLUMNS[sortField(args.sortBy, CONTACT_SORT_FIELDS)];
    const search = args.search ? ' and (x.name ilike ? or x.phone ilike ?)' : '';
    return {
      from: 'from audience_members m join contacts x on x.id = m.contact_id',
      where: `m.audience_id = ${parent}.id and m.organization_id = ?${search}`,
      params: [organizationId, ...(args.search ? [containsPattern(args.search), containsPattern(args.search)] : [])],
      order: `x.${column} ${args.sortOrder === 'asc' ? 'asc' : 'desc'}, x.id ${args.sortOrder === 'asc' ? 'asc' : 'desc'}`,
    };
  },
});

/** Told after an audience's members change or it is deleted, once committed (live programs' triggers follow). */
export type AudienceChangedHook = (organizationId: string, audienceId: string) => Promise<void>;

/** Audiences of the caller's organization and their members. */
export class AudienceService {
  constructor(
    private readonly em: EntityManager,
    private readonly onMembersChanged?: AudienceChangedHook,
  ) {}

  /**
   * A page of audiences; `search` matches name or description; contactCount is counted in the same
   * query. `include`: relations of each audience (Audience.contacts) read in the same statement too.
   */
  async list(actor: Actor, args: PageArgs, include: PageSelection = WHOLE_ROWS): Promise<Page<Audience>> {
    const field = sortField(args.sortBy, AUDIENCE_SORT_FIELDS);
    const { rows: data, meta } = await readPageWith(
      this.em,
      Audience,
      {
        organization: actor.organizationId,
        ...nameOrDescriptionMatch(args.search),
      },
      sortedPage(args, field),
      { organizationId: actor.organizationId, ...include },
    );
    await withLiveCounts(this.em, actor.organizationId, data);
    // A segment's members are no memberships: the page's subquery found none, so they are read by its filter.
    for (const read of include.reads) {
      if (read.relation !== audienceMembers) continue;
      for (const audience of data.filter((each) => each.kind === AudienceKind.dynamic)) {
        preload(
          audience,
          relationKey(audienceMembers, read.args as PageArgs),
          await readList(this.em, this.membersRead(actor, audience, read.args as PageArgs)),
        );
      }
    }
    return { data, meta };
  }

  /** The audience with a fresh contactCount (a dynamic audience's counted now). */
  async get(actor: Actor, id: string): Promise<Audience> {
    const audience = isUuid(id) ? await this.em.findOne(Audience, { id, organization: actor.organizationId }, { refresh: true }) : null;
    if (!audience) throw AppError.notFound('Audience');
    await withLiveCounts(this.em, actor.organizationId, [audience]);
    return audience;
  }

  /**
   * How many contacts of the organization a filter matches now, before any segment is saved with it:
   * the input class's validation (the same 400s as a saved filter's) and the same count as a saved
   * segment's contactCount (memberCountSql, one count by the filter's index).
   */
  async previewSegment(actor: Actor, input: SegmentPreviewInput): Promise<{ contactCount: number }> {
    return { contactCount: await filterCount(this.em, actor.organizationId, input.filter) };
  }

  async create(actor: Actor, input: CreateAudienceInput): Promise<Audience> {
    authorize(actor, 'audiences.manage');
    const audience = this.em.create(Audience, {
      organization: this.em.getReference(Organization, actor.organizationId),
      name: input.name,
      description: input.description ?? null,
      kind: input.filter ? AudienceKind.dynamic : AudienceKind.static,
      filter: input.filter ?? null,
    });
    await this.em.flush();
    return this.get(actor, audience.id);
  }

  /** Changes only the fields that were sent; `updatedAt` moves. */
  async update(actor: Actor, id: string, input: UpdateAudienceInput): Promise<Audience> {
    authorize(actor, 'audiences.manage');
    const audience = await this.get(actor, id);
    if (input.name !== undefined) audience.name = input.name;
    if (input.description !== undefined) audience.description = input.description;
    if (input.filter !== undefined) {
      if (audience.kind !== AudienceKind.dynamic) {
        throw new AppError(
          'CONFLICT',
          'This audience is static: its members are the contacts added to it, and it has no filter. Create a dynamic audience (with a filter) for a segment',
        );
      }
      audience.filter = input.filter;
    }
    audience.updatedAt = new Date();
    await this.em.flush();
    if (input.filter !== undefined) await this.onMembersChanged?.(actor.organizationId, audience.id);
    return this.get(actor, id);
  }

  /** Deletes the audience and its memberships; the contacts stay. */
  async delete(actor: Actor, id: string): Promise<void> {
    authorize(actor, 'audiences.manage');
    const audience = await this.get(actor, id);
    await this.em.remove(audience).flush();
    await this.onMembersChanged?.(actor.organizationId, id);
  }

  /** Adds contacts (already members are left as they are). Any id not of the organization → 404, nothing added. */
  async addMembers(actor: Actor, id: string, input: AudienceMembersInput): Promise<Audience> {
    authorize(actor, 'audiences.manage');
    const audience = await this.get(actor, id);
    this.assertStatic(audience, 'added to');
    const contactIds = await this.ownContactIds(actor, input.contactIds);
    const now = new Date();
    await this.em.transactional(async (em) => {
      // Rows are written by the query builder, which applies no entity defaults: id and timestamps here.
      await em
        .createQueryBuilder(AudienceMember)
        .insert(
          contactIds.map((contactId) => ({
            id: randomUUID(),
            createdAt: now,
            updatedAt: now,
            organization: actor.organizationId,
            audience: audience.id,
            contact: contactId,
          })),
        )
        .onConflict(['audience', 'contact'])
        .ignore()
        .execute();
      await em.nativeUpdate(Audience, { id: audience.id }, { updatedAt: new Date() });
    });
    await this.onMembersChanged?.(actor.organizationId, audience.id);
    return this.get(actor, id);
  }

  /** Removes contacts from the audience; ids of the organization that are not members are ignored. */
  async removeMembers(actor: Actor, id: string, input: AudienceMembersInput): Promise<Audience> {
    authorize(actor, 'audiences.manage');
    const audience = await this.get(actor, id);
    this.assertStatic(audience, 'removed from');
    const contactIds = await this.ownContactIds(actor, input.contactIds);
    await this.em.transactional(async (em) => {
      await em.nativeDelete(AudienceMember, { audience: audience.id, contact: { $in: contactIds } });
      await em.nativeUpdate(Audience, { id: audience.id }, { updatedAt: new Date() });
    });
    await this.onMembersChanged?.(actor.organizationId, audience.id);
    return this.get(actor, id);
  }

  /** A page of one audience's members (REST); 404 for an audience of another organization. */
  async members(actor: Actor, audienceId: string, args: PageArgs): Promise<Page<Contact>> {
    const audience = await this.source(actor, audienceId);
    return readList(this.em, this.membersRead(actor, audience, args));
  }

  /** The same page as `members`, each contact as the JSON text `row` builds (the REST door's answer). */
  async membersJson(actor: Actor, audienceId: string, args: PageArgs, row: RowJson): Promise<JsonPage> {
    const audience = await this.source(actor, audienceId);
    return readJsonList(this.em, this.membersRead(actor, audience, args), row);
  }

  /**
   * One page of members for each audience (audiences must already be the caller's): static audiences
   * without a cursor in two statements whatever their number (a window function pages every audience at
   * once); a segment, a cursor or a single audience by its own keyset page.
   */
  async membersOf(actor: Actor, audienceIds: readonly string[], args: PageArgs): Promise<Page<Contact>[]> {
    const sources = await audienceSources(this.em, actor.organizationId, audienceIds.filter(isUuid));
    const batched = !args.cursor && audienceIds.length > 1 ? audienceIds.filter((audienceId) => sources.get(audienceId)?.kind !== AudienceKind.dynamic) : [];
    const pages = batched.length > 0 ? await this.staticMembersOf(actor, batched, args) : new Map<string, Page<Contact>>();
    return Promise.all(
      audienceIds.map(async (audienceId) => {
        const source = sources.get(audienceId) ?? { id: audienceId, kind: AudienceKind.static, filter: null };
        return pages.get(audienceId) ?? readList(this.em, this.membersRead(actor, source, args));
      }),
    );
  }

  /** What a page of an audience's members reads: contacts of the organization that are members, by keyset; the count kept or counted by the filter. */
  private membersRead(actor: Actor, audience: AudienceSource, args: PageArgs): ListRead<Contact> {
    const field = sortField(args.sortBy, CONTACT_SORT_FIELDS);
    const pattern = args.search ? containsPattern(args.search) : undefined;
    const membership = memberCondition(audience);
    const count = pattern
      ? {
          key: `${membership.key}|search`,
          sql: `select count(*)::int from contacts y where y.organization_id = ? and ${membership.sql('y')} and (y.name ilike ? or y.phone ilike ?)`,
          params: [actor.organizationId, ...membership.params, pattern, pattern],
        }
      : memberCountSql(audience, actor.organizationId);
    return {
      entity: Contact,
      where: { organization: actor.organizationId, ...(pattern ? { $or: [{ name: { $ilike: pattern } }, { phone: { $ilike: pattern } }] } : {}) },
      options: { ...sortedPage<Contact>(args, field), conditions: [membership], count },
      page: args.page,
      limit: args.limit,
    };
  }

  /** The audience's kind and filter; 404 for an audience of another organization. */
  private async source(actor: Actor, audienceId: string): Promise<AudienceSource> {
    const source = isUuid(audienceId) ? await audienceSource(this.em, actor.organizationId, audienceId) : null;
    if (!source) throw AppError.notFound('Audience');
    return source;
  }

  /** A segment's members are whoever its filter matches: none are added or removed by hand (409). */
  private assertStatic(audience: Audience, verb: string): void {
    if (audience.kind === AudienceKind.static) return;
    throw new AppError(
      'CONFLICT',
      `This audience is dynamic: its members are the contacts its filter matches, so contacts cannot be ${verb} it. Change its filter, or use a static audience`,
    );
  }

  /** Pages of static audiences' members, in two statements whatever their number (see membersOf). */
  private async staticMembersOf(actor: Actor, audienceIds: readonly string[], args: PageArgs): Promise<Map<string, Page<Contact>>> {
    const column = CONTACT_COLUMNS[sortField(args.sortBy, CONTACT_SORT_FIELDS)];
    const order = args.sortOrder === 'asc' ? 'asc' : 'desc';
    const ids = audienceIds.map(() => '?').join(', ');
    const search = args.search ? 'and (c.name ilike ? or c.phone ilike ?)' : '';
    const params: unknown[] = [actor.organizationId, ...audienceIds];
    if (args.search) params.push(containsPattern(args.search), containsPattern(args.search));
    const from = `from audience_members m join contacts c on c.id = m.contact_id
      where m.organization_id = ? and m.audience_id in (${ids}) ${search}`;
    const offset = (args.page - 1) * args.limit;
    const rows = await this.em.execute<Record<string, unknown>[]>(
      `select * from (select c.*, m.audience_id as member_of,
         row_number() over (partition by m.audience_id order by c.${column} ${order}, c.id ${order}) as position ${from}) ranked
       where position > ? and position <= ? order by member_of, position`,
      [...params, offset, offset + args.limit] as never[],
    );
    const counts = await this.em.execute<{ audience_id: string; total: number }[]>(
      `select m.audience_id, count(*)::int as total ${from} group by m.audience_id`,
      params as never[],
    );
    const pages = new Map(audienceIds.map((audienceId) => [audienceId, [] as Contact[]]));
    for (const { member_of: audienceId, position: _position, ...row } of rows) {
      pages.get(String(audienceId))?.push(this.em.map(Contact, row));
    }
    const totals = new Map(counts.map((count) => [count.audience_id, Number(count.total)]));
    return new Map(
      audienceIds.map((audienceId) => [audienceId, { data: pages.get(audienceId) ?? [], meta: pageMeta(args.page, args.limit, totals.get(audienceId) ?? 0) }]),
    );
  }

  /** The distinct ids, all of contacts of the organization; otherwise 404 without saying which exist. */
  private async ownContactIds(actor: Actor, contactIds: string[]): Promise<string[]> {
    const unique = [...new Set(contactIds.map((contactId) => contactId.toLowerCase()))];
    const found = await this.em.count(Contact, { id: { $in: unique }, organization: actor.organizationId });
    if (found !== unique.length) throw AppError.notFound('Contact');
    return unique;
  }
}
