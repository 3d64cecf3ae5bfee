import { Type } from 'class-transformer';
import { IsEnum, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { ArgsType, Field, Int, ObjectType, registerEnumType, type ClassType } from 'type-graphql';
import { AppError } from './errors.js';
import { OptionalNonNull } from './validation.js';

/** Far beyond any real list; it keeps offsets inside what both doors and the database can count. */
export const MAX_PAGE = 1_000_000;

export enum SortOrder {
  asc = 'asc',
  desc = 'desc',
}
registerEnumType(SortOrder, { name: 'SortOrder' });

/**
 * The list arguments of CONTRACT.md §6, one class for GraphQL arguments and REST query strings.
 * @Type(() => Number) turns query strings into numbers; 'abc' becomes NaN and fails @IsInt.
 */
@ArgsType()
export class PageArgs {
  @Field(() => Int, { defaultValue: 1, description: 'From 1 to 1000000' })
  @OptionalNonNull()
  @Max(MAX_PAGE)
  @Min(1)
  @IsInt()
  @Type(() => Number)
  page: number = 1;

  @Field(() => Int, { defaultValue: 20, description: '1 to 100' })
  @OptionalNonNull()
  @Max(100)
  @Min(1)
  @IsInt()
  @Type(() => Number)
  limit: number = 20;

  @Field(() => String, { nullable: true, description: 'Case-insensitive match, at most 100 characters' })
  @IsOptional()
  @MaxLength(100)
  @IsString()
  search?: string | null;

  @Field(() => String, { nullable: true, description: 'A field name from the list’s allow-list; default createdAt' })
  @IsOptional()
  @MaxLength(50)
  @IsString()
  sortBy?: string | null;

  @Field(() => SortOrder, { defaultValue: SortOrder.desc })
  @OptionalNonNull()
  @IsEnum(SortOrder)
  sortOrder: SortOrder = SortOrder.desc;
}

/** Page and limit alone, for lists with one fixed order (a conversation's messages, a base's documents). */
@ArgsType()
export class PageOnlyArgs {
  @Field(() => Int, { defaultValue: 1, description: 'From 1 to 1000000' })
  @OptionalNonNull()
  @Max(MAX_PAGE)
  @Min(1)
  @IsInt()
  @Type(() => Number)
  page: number = 1;

  @Field(() => Int, { defaultValue: 20, description: '1 to 100' })
  @OptionalNonNull()
  @Max(100)
  @Min(1)
  @IsInt()
  @Type(() => Number)
  limit: number = 20;
}

@ObjectType({ description: 'Where a page sits in its list' })
export class PageMeta {
  @Field(() => Int) page!: number;
  @Field(() => Int) limit!: number;
  @Field(() => Int) total!: number;
  @Field(() => Int) totalPages!: number;
  @Field(() => Boolean) hasNextPage!: boolean;
  @Field(() => Boolean) hasPreviousPage!: boolean;
}

export interface Page<T> {
  data: T[];
  meta: PageMeta;
}

export function pageMeta(page: number, limit: number, total: number): PageMeta {
  const totalPages = Math.ceil(total / limit);
  return { page, limit, total, totalPages, hasNextPage: page < totalPages, hasPreviousPage: page > 1 };
}

/** `XPage { data: [X!]!, meta: PageMeta! }` for a GraphQL object type X. */
export function createPageType<T extends object>(itemType: ClassType<T>, name: string): ClassType<Page<T>> {
  @ObjectType(name)
  class PageType {
    @Field(() => [itemType]) data!: T[];
    @Field(() => PageMeta) meta!: PageMeta;
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
