import { IsEnum, IsOptional, IsString, Length } from 'class-validator';
import { ArgsType, Field, InputType } from 'type-graphql';
import { PageOnlyArgs } from '../../common/pagination.js';
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
export class CreditLedgerArgs extends PageOnlyArgs {
  @Field(() => CreditEntryKind, { nullable: true, description: 'Only grants, only spends or only refunds' })
  @IsOptional()
  @IsEnum(CreditEntryKind, { message: 'kind must be grant, spend or refund' })
  kind?: CreditEntryKind | null;
}
