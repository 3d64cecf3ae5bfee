import { IsEnum, IsOptional } from 'class-validator';
import { ArgsType, Field } from 'type-graphql';
import { TriggerStatus } from '../program.enums.js';

/** Endpoint 8's filter: the REST query and the GraphQL `status` argument. */
@ArgsType()
export class TriggerListArgs {
  @Field(() => TriggerStatus, { nullable: true, description: 'Only triggers in this state' })
  @IsOptional()
  @IsEnum(TriggerStatus, { message: 'status must be one of pending, triggered, cancelled' })
  status?: TriggerStatus | null;
}
