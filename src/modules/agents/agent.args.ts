import { IsEnum, IsOptional, IsString, Length } from 'class-validator';
import { ArgsType, Field } from 'type-graphql';
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
}

/** A test message or a conversation message: the REST body and the GraphQL `message` argument. */
@ArgsType()
export class MessageArgs {
  @Field({ description: '1 to 10000 characters' })
  @Length(1, 10000)
  @IsString()
  message!: string;
}
