import { Type } from 'class-transformer';
import { IsEnum, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { ArgsType, Field, Int, ObjectType, registerEnumType, type ClassType } from 'type-graphql';
import { AppError } from './errors.js';
import { MAX_CURSOR_LENGTH } from './cursor.js';
import { OptionalNonNull } from './validation.js';

const CURSOR_DESCRIPTION =
  'A cursor from meta.nextCursor, prevCursor or lastCursor of this list (same sortBy and sortOrder): the page is read from there by the index, as fast at the end of the list as at its start; page is then ignored';
const FIXED_CURSOR_DESCRIPTION =
  'A cursor this list answered (meta.nextCursor, prevCursor or lastCursor; on a REST array, the Link header or X-Next-Cursor): the page is read from there by the index, as fast at the end of the list as at its start; page is then ignored';

/** Far beyond any real list; it keeps offsets inside what both doors and the database can count. */
export const MAX_PAGE = 1_000_000;

export enum SortOrder {
  asc = 'asc',
  desc = 'desc',
}
// Stryker disable all: schema wiring, not logic; the schema test (test/platform) compares the printed schema
registerEnumType(SortOrder, {
  name: 'SortOrder',
  description: 'The direction of a list’s order',
  valuesConfig: { asc: { description: 'Smallest (oldest, A) first' }, desc: { description: 'Largest (newest, Z) first' } },
});
// Stryker restore all

/**
 * Page and limit alone, for lists with one fixed order (a conversation's messages, a base's documents);
 * every list's arguments start with them. @Type(() => Number) turns query strings into numbers; 'abc'
 * becomes NaN and fails @IsInt.
 */
@ArgsType()
export class PageOnlyArgs {
  @Field(() => Int, { defaultValue: 1, description: 'The page to answer, from 1 (the first) to 1000000; default 1' })
  @OptionalNonNull()
  @Max(MAX_PAGE)
  @Min(1)
  @IsInt()
  @Type(() => Number)
  page: number = 1;

  @Field(() => Int, { defaultValue: 20, description: 'Items per page, 1 to 100; default 20' })
  @OptionalNonNull()
  @Max(100)
  @Min(1)
  @IsInt()
  @Type(() => Number)
  limit: number = 20;
}

/** The list arguments of CONTRACT.md §6, one class for GraphQL arguments and REST query strings. */
@ArgsType()
export class PageArgs extends PageOnlyArgs {
  @Field(() => String, {
    nullable: true,
    description: 'Only items whose name (or description, where there is one) contains this text, case-insensitive; at most 100 characters',
  })
  @IsOptional()
  @MaxLength(100)
  @IsString()
  search?: string | null;

  @Field(() => String, { nullable: true, description: 'The field to order by, from the list’s allow-list (a 400 names the allowed ones); default createdAt' })
  @IsOptional()
  @MaxLength(50)
  @IsString()
  sortBy?: string | null;

  @Field(() => SortOrder, { defaultValue: SortOrder.desc, description: 'asc or desc; default desc (newest first)' })
  @OptionalNonNull()
  @IsEnum(SortOrder)
  sortOrder: SortOrder = SortOrder.desc;

  @Field(() => String, { nullable: true, description: CURSOR_DESCRIPTION })
  @IsOptional()
  @MaxLength(MAX_CURSOR_LENGTH)
  @IsString()
  cursor?: string | null;
}

/**
 * Page, limit and a cursor: the lists with one fixed order (executions, messages, tool calls, webhook
 * deliveries, API keys, …). A cursor of such a list is written for its fixed order, and checked as a
 * sorted list's is.
 */
@ArgsType()
export class CursorPageArgs extends PageOnlyArgs {
  @Field(() => String, { nullable: true, description: FIXED_CURSOR_DESCRIPTION })
  @IsOptional()
  @MaxLength(MAX_CURSOR_LENGTH)
  @IsString()
  cursor?: string | null;
}

@ObjectType({ description: 'Where a page sits in its list' })
export class PageMeta {
  @Field(() => Int, { description: 'This page’s number, from 1' }) page!: number;
  @Field(() => Int, { description: 'Items per page asked for, 1 to 100' }) limit!: number;
  @Field(() => Int, { description: 'Items in the whole list, over all pages' }) total!: number;
  @Field(() => Int, { description: 'Pages in the whole list at this limit (0 when it is empty)' }) totalPages!: number;
  @Field(() => Boolean, { description: 'Whether a page after this one has items' }) hasNextPage!: boolean;
  @Field(() => Boolean, { description: 'Whether this is not the first page' }) hasPreviousPage!: boolean;
  @Field(() => String, { nullable: true, description: 'The cursor of the page after this one (null on the last page): pass it as cursor' })
  nextCursor?: string | null;
  @Field(() => String, { nullable: true, description: 'The cursor of the page before this one (null on the first page)' })
  prevCursor?: string | null;
  @Field(() => String, { nullable: true, description: 'The cursor of the last page, in this order' })
  lastCursor?: string | null;
}

export interface Page<T> {
  data: T[];
  meta: PageMeta;
}

/** A page whose items the database wrote as JSON text, each as the REST door shows it (src/rest/present-sql.ts). */
export interface JsonPage {
  json: string[];
  meta: PageMeta;
}

/** The PageMeta fields computed from the list's count: a page read without counting it cannot give them. */
export const COUNTED_PAGE_FIELDS: ReadonlySet<string> = new Set(['total', 'totalPages', 'hasNextPage']);

const NO_CURSORS = { nextCursor: null, prevCursor: null, lastCursor: null } as const;

/** A page's meta; `total` null when the list was read without counting it (nobody asked: see RowJson's `total`). */
export function pageMeta(page: number, limit: number, total: number | null): PageMeta {
  if (total === null) return uncountedPageMeta(page, limit);
  const totalPages = Math.ceil(total / limit);
  // A page read by offset alone has no cursors: src/db/keyset.ts writes them (and pagesByParent, given the keyset).
  return { page, limit, total, totalPages, hasNextPage: page < totalPages, hasPreviousPage: page > 1, ...NO_CURSORS };
}

/**
 * The meta of a page read without counting its list: its number and limit. What depends on the count
 * (COUNTED_PAGE_FIELDS) refuses to be read, so that a caller that did not ask for the count cannot
 * answer a made-up one.
 */
function uncountedPageMeta(page: number, limit: number): PageMeta {
  const meta = { page, limit, hasPreviousPage: page > 1, ...NO_CURSORS };
  const uncounted = (): never => {
    throw new Error('this page was read without counting its list (RowJson.total false); ask for the count to read total, totalPages or hasNextPage');
  };
  for (const name of COUNTED_PAGE_FIELDS) Object.defineProperty(meta, name, { get: uncounted });
  return meta as PageMeta;
}

/** `XPage { data: [X!]!, meta: PageMeta! }` for a GraphQL object type X. */
// Stryker disable next-line all: schema wiring, not logic; the schema test (test/platform) compares the printed schema
export function createPageType<T extends object>(itemType: ClassType<T>, name: string): ClassType<Page<T>> {
  @ObjectType(name, { description: `One page of a list of ${itemType.name} items, and where it sits in the list` })
  class PageType {
    @Field(() => [itemType], { description: 'The items of this page, in the list’s order' }) data!: T[];
    @Field(() => PageMeta, { description: 'Where this page sits in the list' }) meta!: PageMeta;
  }
  return PageType;
}

/** The sort field of a list, from its allow-list; anything else is a 400 naming sortBy. */
export function sortField<K extends string>(sortBy: string | null | undefined, allowed: readonly K[]): K {
  const field = (sortBy ?? 'createdAt') as K;
  if (!allowed.includes(field)) {
    throw AppError.badInput([{ field: 'sortBy', message: `sortBy must be one of ${allowed.join(', ')}` }]);
  }
  return field;
}

/** An ILIKE pattern matching `search` anywhere, with %, _ and \ taken literally. */
export function containsPattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/** The filter of a list whose `search` matches the name or the description anywhere; none without a search. */
export function nameOrDescriptionMatch(search: string | null | undefined): { $or?: [{ name: { $ilike: string } }, { description: { $ilike: string } }] } {
  if (!search) return {};
  const pattern = containsPattern(search);
  return { $or: [{ name: { $ilike: pattern } }, { description: { $ilike: pattern } }] };
}
