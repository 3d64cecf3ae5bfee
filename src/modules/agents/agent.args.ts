import { IsEnum, IsOptional, IsString, Length } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { JSONSchema } from 'class-validator-jsonschema/build/decorators.js';
import { ArgsType, Field } from 'type-graphql';
import { IsTemplateValues, TEMPLATE_VALUES_SCHEMA } from './templates/template-values.js';
import { PageArgs } from '../../common/pagination.js';
import { AgentStatus, ConversationStatus } from './agent.enums.js';

/** The agent list: archived agents are left out unless status=archived asks for them. */
@ArgsType()
export class AgentListArgs extends PageArgs {
  @Field(() => AgentStatus, { nullable: true })
  @IsOptional()
  @IsEnum(AgentStatus)
  status?: AgentStatus | null;
}

@ArgsType()
export class ConversationListArgs extends PageArgs {
  @Field(() => ConversationStatus, { nullable: true })
  @IsOptional()
  @IsEnum(ConversationStatus)
  status?: ConversationStatus | null;
}

/** A new conversation: the REST body and the GraphQL `title` argument. Search matches the title. */
@ArgsType()
export class StartConversationArgs {
  @Field(() => String, { nullable: true, description: '1 to 255 characters; what conversation search matches' })
  @IsOptional()
  @Length(1, 255)
  @IsString()
  title?: string | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'Values of the agent’s variables for this conversation (kept with it): at most 50, each a string, number or boolean of at most 1000 characters',
  })
  @JSONSchema(TEMPLATE_VALUES_SCHEMA)
  @IsOptional()
  @IsTemplateValues()
  variables?: Record<string, unknown> | null;
}

/** A test message or a conversation message: the REST body and the GraphQL `message` argument. */
@ArgsType()
export class MessageArgs {
  @Field({ description: '1 to 10000 characters' })
  @Length(1, 10000)
  @IsString()
  message!: string;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'Values of the agent’s variables: for a test message, its only values; in a conversation, added to (or replacing) those it has',
  })
  @JSONSchema(TEMPLATE_VALUES_SCHEMA)
  @IsOptional()
  @IsTemplateValues()
  variables?: Record<string, unknown> | null;
}
