import { Arg, Args, Ctx, Extensions, FieldResolver, ID, Query, Resolver, Root } from 'type-graphql';
import type { Page } from '../../common/pagination.js';
import { actorOf, loadersOf, type GraphQLContext } from '../../graphql/context.js';
import { Agent } from '../agents/agent.entity.js';
import { Conversation } from '../agents/conversation.entity.js';
import { Contact } from '../contacts/contact.entity.js';
import { Execution } from '../programs/execution.entity.js';
import { Program } from '../programs/program.entity.js';
import { CallListArgs, CallPageArgs } from './call.args.js';
import { Call } from './call.entity.js';
import { CallPage } from './call.types.js';
import { contactCalls } from './call.service.js';
import { preloadedRelation } from '../../db/nested-relation.js';
import { GRAPHQL_ONLY } from '../../rest/graphql-only.js';

@Resolver(() => Call)
export class CallResolver {
  @Query(() => CallPage, {
    description: 'A page of the organization’s calls, newest first, as GET /api/calls answers it; filter ids of other organizations match nothing',
  })
  calls(@Args(() => CallListArgs) args: CallListArgs, @Ctx() context: GraphQLContext): Promise<Page<Call>> {
    return context.services.calls.list(actorOf(context), args);
  }

  @Query(() => Call, { description: 'One call of the organization, as GET /api/calls/{id} answers it' })
  call(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Call> {
    return context.services.calls.get(actorOf(context), id);
  }

  @FieldResolver(() => Execution, { nullable: true, description: 'The execution that placed the call (null for an inbound call)' })
  execution(@Root() call: Call, @Ctx() context: GraphQLContext): Promise<Execution | null> | null {
    return call.executionId ? loadersOf(context).calls.executions.load(call.executionId) : null;
  }

  @FieldResolver(() => Contact, { nullable: true, description: 'The contact called, while it exists' })
  contact(@Root() call: Call, @Ctx() context: GraphQLContext): Promise<Contact | null> | null {
    return call.contactId ? loadersOf(context).calls.contacts.load(call.contactId) : null;
  }

  @FieldResolver(() => Program, { nullable: true, description: 'The program of the call’s execution, while it exists' })
  program(@Root() call: Call, @Ctx() context: GraphQLContext): Promise<Program | null> | null {
    return call.programId ? loadersOf(context).programs.programs.load(call.programId) : null;
  }

  @FieldResolver(() => Conversation, { nullable: true, description: 'The conversation spoken on the call (its turns as messages); batched' })
  conversation(@Root() call: Call, @Ctx() context: GraphQLContext): Promise<Conversation | null> | null {
    return call.conversationId ? loadersOf(context).calls.conversations.load(call.conversationId) : null;
  }

  @FieldResolver(() => Agent, { nullable: true, description: 'The agent that spoke on the call, while it exists' })
  agent(@Root() call: Call, @Ctx() context: GraphQLContext): Promise<Agent | null> | null {
    return call.agentId ? loadersOf(context).programs.agents.load(call.agentId) : null;
  }
}

/** Adds Execution.calls without the programs module knowing about telephony. */
@Resolver(() => Execution)
export class ExecutionCallsResolver {
  @FieldResolver(() => CallPage, { description: 'The execution’s calls, every attempt, newest first; batched across executions' })
  calls(@Root() execution: Execution, @Args(() => CallPageArgs) args: CallPageArgs, @Ctx() context: GraphQLContext): Promise<Page<Call>> {
    return loadersOf(context).calls.ofExecution(execution.id, args);
  }
}

/** Adds Conversation.call without the agents module knowing about telephony. */
@Resolver(() => Conversation)
export class ConversationCallResolver {
  // REST shows callId (GET /api/calls/{id} reads the call): the agents module's routes know nothing of calls.
  @FieldResolver(() => Call, { nullable: true, description: 'The phone call the conversation was spoken on; batched' })
  @Extensions(GRAPHQL_ONLY)
  call(@Root() conversation: Conversation, @Ctx() context: GraphQLContext): Promise<Call | null> | null {
    return conversation.callId ? loadersOf(context).calls.byId.load(conversation.callId) : null;
  }
}

/** Adds Contact.calls without the contacts module knowing about telephony. */
@Resolver(() => Contact)
export class ContactCallsResolver {
  @FieldResolver(() => CallPage, { description: 'The calls to (or from) the contact, every execution, newest first; batched across contacts' })
  calls(@Root() contact: Contact, @Args(() => CallPageArgs) args: CallPageArgs, @Ctx() context: GraphQLContext): Promise<Page<Call>> {
    // Read with the contacts page when its selection asked for them (look-ahead), else batched.
    const ready = preloadedRelation<Page<Call>, CallPageArgs>(contact, contactCalls, args);
    return ready ? Promise.resolve(ready) : loadersOf(context).calls.ofContact(contact.id, args);
  }
}
