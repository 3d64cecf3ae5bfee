import { Arg, Args, Ctx, ID, Query, Resolver } from 'type-graphql';
import { createPageType, type Page } from '../../common/pagination.js';
import { actorOf, type GraphQLContext } from '../../graphql/context.js';
import { EventListArgs } from './event.args.js';
import { Event } from './event.entity.js';
import { sqlList } from '../../graphql/sql-answers.js';

export const EventPage = createPageType(Event, 'EventPage');

// The page as the database writes it, when the whole query can be (src/graphql/sql-answers.ts).
sqlList({ field: 'events', entity: Event, args: EventListArgs, read: (context, actor, args, row) => context.services.events.listJson(actor, args, row) });

@Resolver(() => Event)
export class EventResolver {
  @Query(() => EventPage, { description: 'A page of the organization’s events, newest first, as GET /api/events answers it' })
  events(@Args(() => EventListArgs) args: EventListArgs, @Ctx() context: GraphQLContext): Promise<Page<Event>> {
    return context.services.events.list(actorOf(context), args);
  }

  @Query(() => Event, { description: 'One event of the organization, as GET /api/events/{id} answers it' })
  event(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Event> {
    return context.services.events.get(actorOf(context), id);
  }
}
