import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'The call a conversation was spoken on, as its templates saw it' })
export class ContextCall {
  @Field(() => ID) id!: string;
  @Field({ description: 'inbound or outbound' }) direction!: string;
  @Field(() => String, { nullable: true, description: 'The calling number (E.164)' }) from!: string | null;
  @Field(() => String, { nullable: true, description: 'The called number (E.164)' }) to!: string | null;
}

@ObjectType({ description: 'The contact a conversation was with, as its templates saw it (a snapshot taken when it started)' })
export class ContextContact {
  @Field(() => ID, { nullable: true, description: 'Null for a caller who is no contact of the organization' }) id!: string | null;
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field(() => String, { nullable: true, description: '{{contact.phone}} (E.164)' }) phone!: string | null;
  @Field(() => String, { nullable: true, description: '{{contact.timeZone}}: an IANA time zone' }) timeZone!: string | null;
  @Field(() => GraphQLJSONObject, { description: 'The contact’s attributes ({{contact.attributes.<key>}})' }) attributes!: Record<string, unknown>;
}

@ObjectType({ description: 'The program whose execution placed the call' })
export class ContextProgram {
  @Field(() => ID) id!: string;
  @Field() name!: string;
}

@ObjectType({
  description:
    'What a conversation’s templates were rendered from: the call, the contact, the program and the values of the variables, as they were when it started',
})
export class ConversationContext {
  @Field(() => ContextCall, { nullable: true, description: 'Null for a typed conversation' }) call!: ContextCall | null;
  @Field(() => ContextContact, { nullable: true, description: 'Null for a typed conversation' }) contact!: ContextContact | null;
  @Field(() => ContextProgram, { nullable: true, description: 'Null unless a program’s execution placed the call' }) program!: ContextProgram | null;
  @Field(() => ID, { nullable: true }) executionId!: string | null;
  @Field(() => GraphQLJSONObject, { description: 'Each variable with the value used (given, from the contact, the execution, or the agent’s default)' })
  variables!: Record<string, string>;
  @Field({ description: '{{now}}: when the conversation started (ISO 8601)' }) now!: string;
  @Field({ description: '{{contact.localTime}}: that moment on the contact’s clock' }) localTime!: string;
  @Field(() => String, {
    nullable: true,
    description: 'On an outbound call: the line the agent was told to answer an automated call screener with (the program’s screeningResponse, rendered)',
  })
  screening!: string | null;
}
