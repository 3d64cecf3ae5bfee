import { Type } from 'class-transformer';
import { IsEnum, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, InputType, Int } from 'type-graphql';
import { MAX_PAGE } from '../../common/pagination.js';
import { OptionalNonNull } from '../../common/validation.js';
import { CreditEntryKind } from './credit-ledger.entity.js';

@InputType({ description: 'Changes to the organization' })
export class UpdateOrganizationInput {
  @Field({ description: '1 to 255 characters' })
  @Length(1, 255)
  @IsString()
  name!: string;
}

/** The ledger's list arguments: a page, newest first, optionally one kind. */
@ArgsType()
export class CreditLedgerArgs {
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

  @Field(() => CreditEntryKind, { nullable: true, description: 'Only grants or only spends' })
  @IsOptional()
  @IsEnum(CreditEntryKind, { message: 'kind must be grant or spend' })
  kind?: CreditEntryKind | null;
}
