import { Arg, Ctx, Int, Mutation, Query, Resolver } from 'type-graphql';
import { parseInput } from '../../common/validation.js';
import { actorOf, type GraphQLContext } from '../../graphql/context.js';
import { Organization } from './organization.entity.js';
import { AddCreditsInput, UpdateOrganizationInput } from './organization.inputs.js';

@Resolver(() => Organization)
export class OrganizationResolver {
  @Query(() => Organization, { description: "The caller's organization" })
  organization(@Ctx() context: GraphQLContext): Promise<Organization> {
    return context.services.organizations.get(actorOf(context));
  }

  @Mutation(() => Organization, { description: 'Owner or admin only' })
  updateOrganization(@Arg('input') input: UpdateOrganizationInput, @Ctx() context: GraphQLContext): Promise<Organization> {
    return context.services.organizations.update(actorOf(context), input);
  }

  @Mutation(() => Organization, { description: 'Adds 1 to 1000000 credits; owner or admin only' })
  async addCredits(@Arg('amount', () => Int) amount: number, @Ctx() context: GraphQLContext): Promise<Organization> {
    // The REST body class validates the amount, so both doors apply the same limits.
    const input = await parseInput(AddCreditsInput, { amount });
    return context.services.organizations.addCredits(actorOf(context), input);
  }
}
