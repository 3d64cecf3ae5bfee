import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import { actorOf, type GraphQLContext } from '../../graphql/context.js';
import { Call } from './call.entity.js';
import { PlaceCallInput } from './direct-call.inputs.js';

@Resolver(() => Call)
export class DirectCallResolver {
  @Mutation(() => Call, {
    description: 'Places one outbound call now, as POST /api/calls does: the call record, status queued; its progress arrives as events',
  })
  placeCall(@Arg('input', () => PlaceCallInput) input: PlaceCallInput, @Ctx() context: GraphQLContext): Promise<Call> {
    return context.services.directCalls.place(actorOf(context), input);
  }
}
