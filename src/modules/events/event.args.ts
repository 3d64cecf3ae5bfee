import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsDate, IsIn, IsOptional, IsUUID } from 'class-validator';
import { ArgsType, Field, ID } from 'type-graphql';
import { toDate } from '../../common/dates.js';
import { PageArgs } from '../../common/pagination.js';
import { EVENT_TYPES } from './event.types.js';

/** REST takes `type=a&type=b` or `type=a,b`; GraphQL a list. */
function toTypeList({ value }: { value: unknown }): unknown {
  if (value === undefined || value === null) return value;
  const list = Array.isArray(value) ? value : [value];
  return list.flatMap((item) => (typeof item === 'string' ? item.split(',').map((part) => part.trim()) : [item]));
}

/** GET /api/events and GraphQL events(...): the common list arguments and the filters. */
@ArgsType()
export class EventListArgs extends PageArgs {
  @Field(() => [String], {
    nullable: true,
    description: `Only events of these types (REST: repeat the parameter or separate with commas): ${EVENT_TYPES.join(', ')}`,
  })
  @IsOptional()
  @Transform(toTypeList)
  @ArrayMaxSize(EVENT_TYPES.length)
  @IsIn(EVENT_TYPES, { each: true, message: `type must be one of ${EVENT_TYPES.join(', ')}` })
  type?: string[] | null;

  @Field(() => ID, {
    nullable: true,
    description:
      'Only the events about this call: its call.* events, and any other whose payload names it (callId); another organization’s call matches nothing',
  })
  @IsOptional()
  @IsUUID('all', { message: 'callId must be a UUID' })
  callId?: string | null;

  @Field(() => Date, { nullable: true, description: 'Only events created at or after this instant (ISO 8601 date-time)' })
  @IsOptional()
  @Transform(toDate)
  @IsDate({ message: 'createdAfter must be an ISO 8601 date-time' })
  createdAfter?: Date | null;

  @Field(() => Date, { nullable: true, description: 'Only events created before this instant (ISO 8601 date-time); after createdAfter' })
  @IsOptional()
  @Transform(toDate)
  @IsDate({ message: 'createdBefore must be an ISO 8601 date-time' })
  createdBefore?: Date | null;
}
