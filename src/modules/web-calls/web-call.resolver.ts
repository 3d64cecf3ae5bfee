import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import { actorOf, type GraphQLContext } from '../../graphql/context.js';
import { CreateWebCallInput } from './web-call.inputs.js';
import { WebCallTicket } from './web-call.types.js';

@Resolver(() => WebCallTicket)
export class WebCallResolver {
  @Mutation(() => WebCallTicket, {
    description: 'A web call to a streaming or speech-to-speech agent: a single-use token (5 minutes) and the /talk page that opens it',
  })
  createWebCall(@Arg('input') input: CreateWebCallInput, @Ctx() context: GraphQLContext): Promise<WebCallTicket> {
    return context.services.webCalls.create(actorOf(context), input);
  }
}
