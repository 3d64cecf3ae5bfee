import { ArrayMaxSize, IsArray, IsEnum, IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { ArgsType, Field, InputType, Int } from 'type-graphql';
import { OptionalNonNull } from '../../common/validation.js';
import { CursorPageArgs } from '../../common/pagination.js';
import { CreditEntryKind } from './credit-ledger.entity.js';

/** The most origins an organization lists for its web calls. */
export const MAX_WEB_CALL_ORIGINS = 20;
/** An origin as a browser sends it in `Origin`: scheme, host (lower case), optional port; nothing after. */
export const WEB_ORIGIN = /^https?:\/\/[a-z0-9.-]{1,253}(?::[0-9]{1,5})?$/;

/** The most a recording can be kept by the retention setting: ten years. */
export const MAX_RECORDING_RETENTION_DAYS = 3650;

@InputType({ description: 'Changes to the organization: the fields that are sent' })
export class UpdateOrganizationInput {
  @Field({ nullable: true, description: '1 to 255 characters' })
  @OptionalNonNull()
  @Length(1, 255)
  @IsString()
  name?: string;

  @Field(() => Int, {
    nullable: true,
    description: `Delete call recordings this many days after they were made, 1 to ${MAX_RECORDING_RETENTION_DAYS}; null keeps them until a user deletes them`,
  })
  @IsOptional()
  @Max(MAX_RECORDING_RETENTION_DAYS)
  @Min(1)
  @IsInt()
  recordingRetentionDays?: number | null;

  @Field(() => [String], {
    nullable: true,
    description: `Origins whose pages may open web calls with the widget, each scheme://host[:port] with no path (https://shop.example), at most ${MAX_WEB_CALL_ORIGINS}; replaces the list`,
  })
  @OptionalNonNull()
  @Matches(WEB_ORIGIN, { each: true, message: 'each of webCallOrigins must be an origin: http(s)://host[:port], lower case, no path, no trailing slash' })
  @IsString({ each: true })
  @ArrayMaxSize(MAX_WEB_CALL_ORIGINS)
  @IsArray()
  webCallOrigins?: string[];
}

/** The ledger's list arguments: a page, newest first, optionally one kind. */
@ArgsType()
export class CreditLedgerArgs extends CursorPageArgs {
  @Field(() => CreditEntryKind, { nullable: true, description: 'Only grants, only spends or only refunds' })
  @IsOptional()
  @IsEnum(CreditEntryKind, { message: 'kind must be grant, spend or refund' })
  kind?: CreditEntryKind | null;
}
