import { Arg, Ctx, ID, Resolver, Root, Subscription, type SubscribeResolverData } from 'type-graphql';
import { Message } from '../../agents/message.entity.js';
import { Execution } from '../../programs/execution.entity.js';
import { Call } from '../../telephony/call.entity.js';
import { actorOf, type GraphQLContext } from '../../../graphql/context.js';
import { Event } from '../event.entity.js';
import { EVENT_TYPES } from '../event.types.js';
import type { ExecutionUpdate } from './live.service.js';

type Data = SubscribeResolverData<unknown, Record<string, unknown>, GraphQLContext>;

const live = (context: GraphQLContext) => context.services.live;

/**
 * GraphQL subscriptions over graphql-ws on /graphql. Each checks on subscribe that what it follows
 * is the caller's organization's (NOT_FOUND otherwise, as the matching query), then yields, for each
 * matching event, the object the matching query returns, read again for the subscriber.
 */
@Resolver()
export class SubscriptionResolver {
  @Subscription(() => Execution, {
    description:
      'The execution as it is now, then each time it moves (started, paused, resumed, …) or its counters progress (at most once a second); ' +
      'completes once it is final (completed, stopped, cancelled), at once when it already was',
    subscribe: ({ args, context }: Data) => live(context).execution(actorOf(context), String(args.id)),
  })
  executionUpdated(@Arg('id', () => ID) _id: string, @Root() update: ExecutionUpdate, @Ctx() context: GraphQLContext): Promise<Execution> {
    return context.services.executions.get(actorOf(context), update.executionId);
  }

  @Subscription(() => Execution, {
    description: 'Every execution of the program each time it is created, moves or progresses',
    subscribe: ({ args, context }: Data) => live(context).programExecutions(actorOf(context), String(args.programId)),
  })
  executionsUpdated(@Arg('programId', () => ID) _programId: string, @Root() event: Event, @Ctx() context: GraphQLContext): Promise<Execution> {
    return context.services.executions.get(actorOf(context), String(event.payload.id));
  }

  @Subscription(() => Call, {
    description: 'Each call of the execution when it starts (in_progress), when it ends, and when its analysis is recorded (call.analyzed)',
    subscribe: ({ args, context }: Data) => live(context).executionCalls(actorOf(context), String(args.executionId)),
  })
  callUpdated(@Arg('executionId', () => ID) _executionId: string, @Root() event: Event, @Ctx() context: GraphQLContext): Promise<Call> {
    return context.services.calls.get(actorOf(context), String(event.payload.id));
  }

  @Subscription(() => Message, {
    description: 'Each message stored in the conversation: the user’s and the reply',
    subscribe: ({ args, context }: Data) => live(context).conversationMessages(actorOf(context), String(args.conversationId)),
  })
  conversationMessageAdded(@Arg('conversationId', () => ID) conversationId: string, @Root() event: Event, @Ctx() context: GraphQLContext): Promise<Message> {
    return live(context).message(actorOf(context), conversationId, String(event.payload.id));
  }

  @Subscription(() => Event, {
    description: `Every event of the organization as it commits, of the given types (none or empty: all): ${EVENT_TYPES.join(', ')}; an unknown type is BAD_USER_INPUT`,
    subscribe: ({ args, context }: Data) =>
      live(context).events(actorOf(context), (args.types as string[] | null | undefined) ?? null, args.after as string | null | undefined),
  })
  events(
    @Arg('types', () => [String], { nullable: true, description: 'Only events of these types; none or empty: every type' }) _types: string[] | null,
    @Arg('after', () => ID, {
      nullable: true,
      description:
        'An event’s id (the last one received): the kept events after it come first, oldest first, then the live ones, none twice, so a client that reconnects with it misses nothing; an id that is not one of the organization’s kept events is NOT_FOUND',
    })
    _after: string | null,
    @Root() event: Event,
  ): Event {
    return event;
  }
}
