import { Arg, Args, Ctx, Int, Mutation, Query, Resolver } from 'type-graphql';
import { createPageType, type Page } from '../../common/pagination.js';
import { actorOf, type GraphQLContext } from '../../graphql/context.js';
import { CreditLedgerEntry } from './credit-ledger.entity.js';
import { Organization } from './organization.entity.js';
import { CreditLedgerArgs, UpdateOrganizationInput } from './organization.inputs.js';
import { OPERATOR_GRANTS } from './organization.service.js';
import { sqlList } from '../../graphql/sql-answers.js';

export const CreditLedgerPage = createPageType(CreditLedgerEntry, 'CreditLedgerPage');

// The page as the database writes it, when the whole query can be (src/graphql/sql-answers.ts).
sqlList({
  field: 'creditLedger',
  entity: CreditLedgerEntry,
  args: CreditLedgerArgs,
  read: (context, actor, args, row) => context.services.credits.ledgerJson(actor, args, row),
});

@Resolver(() => Organization)
export class OrganizationResolver {
  @Query(() => Organization, { description: "The caller's organization" })
  organization(@Ctx() context: GraphQLContext): Promise<Organization> {
    return context.services.organizations.get(actorOf(context));
  }

  @Query(() => CreditLedgerPage, { description: 'The organization’s credit movements, newest first: operator grants and campaign spends' })
  creditLedger(@Args(() => CreditLedgerArgs) args: CreditLedgerArgs, @Ctx() context: GraphQLContext): Promise<Page<CreditLedgerEntry>> {
    return context.services.credits.ledger(actorOf(context), args);
  }

  @Mutation(() => Organization, { description: 'Owner only' })
  updateOrganization(@Arg('input') input: UpdateOrganizationInput, @Ctx() context: GraphQLContext): Promise<Organization> {
    return context.services.organizations.update(actorOf(context), input);
  }

  @Mutation(() => Organization, { description: 'Always FORBIDDEN', deprecationReason: OPERATOR_GRANTS })
  addCredits(@Arg('amount', () => Int) _amount: number, @Ctx() context: GraphQLContext): Organization {
    return context.services.organizations.addCredits(actorOf(context));
  }
}
