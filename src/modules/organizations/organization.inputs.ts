import { IsInt, IsString, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, InputType, Int } from 'type-graphql';

export const MAX_CREDIT_TOP_UP = 1_000_000;

@InputType({ description: 'Changes to the organization' })
export class UpdateOrganizationInput {
  @Field({ description: '1 to 255 characters' })
  @Length(1, 255)
  @IsString()
  name!: string;
}

/** The REST body of a top-up and the GraphQL `amount` argument, validated by the same rules. */
@ArgsType()
export class AddCreditsInput {
  @Field(() => Int, { description: `1 to ${MAX_CREDIT_TOP_UP}` })
  @Max(MAX_CREDIT_TOP_UP)
  @Min(1)
  @IsInt()
  amount!: number;
}
