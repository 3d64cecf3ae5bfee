import { IsEnum, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, InputType, Int } from 'type-graphql';
import { OptionalNonNull } from '../../common/validation.js';
import { PageOnlyArgs } from '../../common/pagination.js';
import { CreditEntryKind } from './credit-ledger.entity.js';

/** The most a recording can be kept by the retention setting: ten years. */
export const MAX_RECORDING_RETENTION_DAYS = 3650;

@InputType({ description: 'Changes to the organization: the fields that are sent' })
export class UpdateOrganizationInput {
  @Field({ nullable: true, description: '1 to 255 characters' })
  @OptionalNonNull()
  @Length(1, 255)
  @IsString()
  name?: string;

  @Field(() => Int, { nullable: true, description: `Delete call recordings this many days after they were made, 1 to ${MAX_RECORDING_RETENTION_DAYS}; null keeps them until a user deletes them` })
  @IsOptional()
  @Max(MAX_RECORDING_RETENTION_DAYS)
  @Min(1)
  @IsInt()
  recordingRetentionDays?: number | null;
}

/** The ledger's list arguments: a page, newest first, optionally one kind. */
@ArgsType()
export class CreditLedgerArgs extends PageOnlyArgs {
  @Field(() => CreditEntryKind, { nullable: true, description: 'Only grants, only spends or only refunds' })
  @IsOptional()
  @IsEnum(CreditEntryKind, { message: 'kind must be grant, spend or refund' })
  kind?: CreditEntryKind | null;
}
