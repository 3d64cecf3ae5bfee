import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { PageArgs, type Page } from '../../common/pagination.js';
import { actorOf, loadersOf, type GraphQLContext } from '../../graphql/context.js';
import { DeletionResult } from '../auth/auth.types.js';
import { Program } from '../programs/program.entity.js';
import { CarrierConnection } from './carrier-connection.entity.js';
import { DeleteCarrierConnectionArgs } from './carrier-connection.args.js';
import { PhoneNumber } from './phone-number.entity.js';
import { CreateCarrierConnectionInput, CreatePhoneNumberInput, UpdateCarrierConnectionInput, UpdatePhoneNumberInput } from './telephony.inputs.js';
import { CarrierConnectionPage, PhoneNumberPage } from './telephony.types.js';
import { Carrier } from './carrier-kinds.types.js';
import { sqlList } from '../../graphql/sql-answers.js';

// The page as the database writes it, when the whole query can be (src/graphql/sql-answers.ts).
sqlList({
  field: 'carrierConnections',
  entity: CarrierConnection,
  args: PageArgs,
  read: (context, actor, args, row) => context.services.carrierConnections.listJson(actor, args, row),
});

@Resolver(() => CarrierConnection)
export class CarrierConnectionResolver {
  @Query(() => CarrierConnectionPage, { description: 'A page of the organization’s carrier connections; search matches the name' })
  carrierConnections(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext): Promise<Page<CarrierConnection>> {
    return context.services.carrierConnections.list(actorOf(context), args);
  }

  @Query(() => [Carrier], {
    description: 'The carriers a connection can be made to, as GET /api/carriers answers them: each one’s kind, label and connection fields',
  })
  carriers(@Ctx() context: GraphQLContext): Carrier[] {
    actorOf(context);
    return context.services.carrierConnections.carriers();
  }

  @Query(() => CarrierConnection, { description: 'A carrier connection of the organization (never its auth token)' })
  carrierConnection(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<CarrierConnection> {
    return context.services.carrierConnections.get(actorOf(context), id);
  }

  @Mutation(() => CarrierConnection, {
    description:
      'Owner or admin only; the carrier checks the credentials first (rejected → BAD_USER_INPUT, unreachable → UNAVAILABLE); needs CREDENTIALS_KEY (CONFLICT otherwise)',
  })
  createCarrierConnection(@Arg('input') input: CreateCarrierConnectionInput, @Ctx() context: GraphQLContext): Promise<CarrierConnection> {
    return context.services.carrierConnections.create(actorOf(context), input);
  }

  @Mutation(() => CarrierConnection, {
    description: 'Owner or admin only; changes the fields sent; a new authToken is checked with the carrier before it replaces the old one',
  })
  updateCarrierConnection(
    @Arg('id', () => ID) id: string,
    @Arg('input') input: UpdateCarrierConnectionInput,
    @Ctx() context: GraphQLContext,
  ): Promise<CarrierConnection> {
    return context.services.carrierConnections.update(actorOf(context), id, input);
  }

  @Mutation(() => DeletionResult, {
    description:
      'Owner or admin only; the connection’s numbers stay, without a connection; CONFLICT naming the recordings the carrier still keeps through it, unless keepRecordings',
  })
  async deleteCarrierConnection(
    @Arg('id', () => ID) id: string,
    @Args(() => DeleteCarrierConnectionArgs) args: DeleteCarrierConnectionArgs,
    @Ctx() context: GraphQLContext,
  ): Promise<DeletionResult> {
    await context.services.carrierConnections.delete(actorOf(context), id, args);
    return { id, message: `Carrier connection ${id} deleted` };
  }
}

@Resolver(() => PhoneNumber)
export class PhoneNumberResolver {
  @Query(() => PhoneNumberPage, { description: 'A page of the organization’s phone numbers; search matches the number or the label' })
  phoneNumbers(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext): Promise<Page<PhoneNumber>> {
    return context.services.phoneNumbers.list(actorOf(context), args);
  }

  @Query(() => PhoneNumber, { description: 'A phone number of the organization' })
  phoneNumber(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<PhoneNumber> {
    return context.services.phoneNumbers.get(actorOf(context), id);
  }

  @FieldResolver(() => CarrierConnection, { nullable: true, description: 'The carrier account the number belongs to; batched across numbers' })
  carrierConnection(@Root() number: PhoneNumber, @Ctx() context: GraphQLContext): Promise<CarrierConnection | null> | null {
    return number.carrierConnection ? loadersOf(context).telephony.carrierConnections.load(number.carrierConnection.id) : null;
  }

  @Mutation(() => PhoneNumber, { description: 'Owner or admin only; a number already in the organization is a CONFLICT' })
  createPhoneNumber(@Arg('input') input: CreatePhoneNumberInput, @Ctx() context: GraphQLContext): Promise<PhoneNumber> {
    return context.services.phoneNumbers.create(actorOf(context), input);
  }

  @Mutation(() => PhoneNumber, { description: 'Owner or admin only; changes the fields sent' })
  updatePhoneNumber(@Arg('id', () => ID) id: string, @Arg('input') input: UpdatePhoneNumberInput, @Ctx() context: GraphQLContext): Promise<PhoneNumber> {
    return context.services.phoneNumbers.update(actorOf(context), id, input);
  }

  @Mutation(() => DeletionResult, { description: 'Owner or admin only; programs that used it as caller ID lose it' })
  async deletePhoneNumber(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<DeletionResult> {
    await context.services.phoneNumbers.delete(actorOf(context), id);
    return { id, message: `Phone number ${id} deleted` };
  }
}

/** Program.fromNumber, added by this module to the programs' type. */
@Resolver(() => Program)
export class ProgramCallerIdResolver {
  @FieldResolver(() => PhoneNumber, { nullable: true, description: 'The caller ID of the program’s calls; batched across programs' })
  fromNumber(@Root() program: Program, @Ctx() context: GraphQLContext): Promise<PhoneNumber | null> | null {
    return program.fromNumber ? loadersOf(context).telephony.phoneNumbers.load(program.fromNumber.id) : null;
  }
}
