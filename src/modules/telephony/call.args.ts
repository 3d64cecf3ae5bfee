import { Transform } from 'class-transformer';
import { IsDate, IsEnum, IsIn, IsOptional, IsString, IsUUID } from 'class-validator';
import { ArgsType, Field, ID } from 'type-graphql';
import { toDate } from '../../common/dates.js';
import { CursorPageArgs, PageArgs } from '../../common/pagination.js';
import { CallDirection, CallStatus } from './telephony.enums.js';

/** What a call's `outcome` can be once it ended (or was not placed: do_not_call). */
export const CALL_OUTCOME_VALUES = ['answered', 'voicemail', 'voicemail_left', 'no_answer', 'busy', 'failed', 'do_not_call'] as const;

/**
 * GET /api/calls and GraphQL calls(...): the common list arguments and the filters. An id of
 * another organization is no error: it matches nothing, as a call outlives the records it names.
 */
@ArgsType()
export class CallListArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: 'Only the calls of this execution' })
  @IsOptional()
  @IsUUID('all', { message: 'executionId must be a UUID' })
  executionId?: string | null;

  @Field(() => ID, { nullable: true, description: 'Only the calls of this program' })
  @IsOptional()
  @IsUUID('all', { message: 'programId must be a UUID' })
  programId?: string | null;

  @Field(() => ID, { nullable: true, description: 'Only the calls to (or from) this contact' })
  @IsOptional()
  @IsUUID('all', { message: 'contactId must be a UUID' })
  contactId?: string | null;

  @Field(() => CallStatus, { nullable: true, description: 'Only calls in this status' })
  @IsOptional()
  @IsEnum(CallStatus, { message: `status must be one of ${Object.values(CallStatus).join(', ')}` })
  status?: CallStatus | null;

  @Field(() => String, { nullable: true, description: `Only calls that ended with this outcome: ${CALL_OUTCOME_VALUES.join(', ')}` })
  @IsOptional()
  @IsIn(CALL_OUTCOME_VALUES, { message: `outcome must be one of ${CALL_OUTCOME_VALUES.join(', ')}` })
  @IsString()
  outcome?: string | null;

  @Field(() => CallDirection, { nullable: true, description: 'Only outbound or only inbound calls' })
  @IsOptional()
  @IsEnum(CallDirection, { message: `direction must be one of ${Object.values(CallDirection).join(', ')}` })
  direction?: CallDirection | null;

  @Field(() => Date, { nullable: true, description: 'Only calls queued at or after this instant (ISO 8601 date-time)' })
  @IsOptional()
  @Transform(toDate)
  @IsDate({ message: 'queuedAfter must be an ISO 8601 date-time' })
  queuedAfter?: Date | null;

  @Field(() => Date, { nullable: true, description: 'Only calls queued before this instant (ISO 8601 date-time); after queuedAfter' })
  @IsOptional()
  @Transform(toDate)
  @IsDate({ message: 'queuedBefore must be an ISO 8601 date-time' })
  queuedBefore?: Date | null;
}

/** Execution.calls and Contact.calls: a page, newest first, optionally of one status. */
@ArgsType()
export class CallPageArgs extends CursorPageArgs {
  @Field(() => CallStatus, { nullable: true, description: 'Only calls in this status' })
  @IsOptional()
  @IsEnum(CallStatus, { message: `status must be one of ${Object.values(CallStatus).join(', ')}` })
  status?: CallStatus | null;
}
