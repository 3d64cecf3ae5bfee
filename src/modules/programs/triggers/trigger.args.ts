import { IsEnum, IsOptional } from 'class-validator';
import { ArgsType, Field } from 'type-graphql';
import { CursorPageArgs } from '../../../common/pagination.js';
import { TriggerStatus } from '../program.enums.js';

/** Endpoint 8's filter and page: the REST query and the GraphQL arguments. */
@ArgsType()
export class TriggerListArgs extends CursorPageArgs {
  @Field(() => TriggerStatus, { nullable: true, description: 'Only triggers in this state' })
  @IsOptional()
  @IsEnum(TriggerStatus, { message: 'status must be one of pending, triggered, cancelled' })
  status?: TriggerStatus | null;
}
