import { IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { Field, InputType, ObjectType } from 'type-graphql';
import { TEMPLATE_LIMITS, VARIABLE_NAME } from './template-language.js';

/** How many variables an agent declares at most. */
export const MAX_AGENT_VARIABLES = 50;

@ObjectType({ description: 'A variable the agent’s templates use, with its default' })
export class AgentVariable {
  @Field({ description: 'What {{name}} in a template stands for' })
  name!: string;

  @Field(() => String, { nullable: true, description: 'The value when the conversation, the contact and the execution give none; null: one of them must' })
  default?: string | null;

  @Field(() => String, { nullable: true, description: 'What the variable holds, for the people who give it' })
  description?: string | null;
}

@InputType({ description: 'A variable the agent’s templates use' })
export class AgentVariableInput {
  @Field({ description: 'A letter, then letters, digits or underscores (at most 64); not contact, program, call, agent, organization, now or variables' })
  @Matches(VARIABLE_NAME, { message: 'name must start with a letter and hold only letters, digits and underscores (at most 64)' })
  @IsString()
  name!: string;

  @Field(() => String, { nullable: true, description: `At most ${TEMPLATE_LIMITS.valueChars} characters` })
  @IsOptional()
  @MaxLength(TEMPLATE_LIMITS.valueChars)
  @IsString()
  default?: string | null;

  @Field(() => String, { nullable: true, description: 'At most 500 characters' })
  @IsOptional()
  @Length(0, 500)
  @IsString()
  description?: string | null;
}
