import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { CursorPageArgs, PageArgs, type Page } from '../../common/pagination.js';
import { actorOf, loadersOf, type GraphQLContext } from '../../graphql/context.js';
import { DeletionResult } from '../auth/auth.types.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { WebhookEndpoint, WebhookEndpointWithSecret } from './webhook-endpoint.entity.js';
import { CreateWebhookDeliveryInput, CreateWebhookEndpointInput, UpdateWebhookEndpointInput } from './webhook.inputs.js';
import { WebhookDeliveryPage, WebhookEndpointPage } from './webhook.types.js';

@Resolver(() => WebhookEndpoint)
export class WebhookEndpointResolver {
  @Query(() => WebhookEndpointPage, { description: 'A page of the organization’s webhook endpoints; search matches the URL or the description' })
  webhookEndpoints(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext): Promise<Page<WebhookEndpoint>> {
    return context.services.webhookEndpoints.list(actorOf(context), args);
  }

  @Query(() => WebhookEndpoint, { description: 'A webhook endpoint of the organization (never its secret)' })
  webhookEndpoint(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<WebhookEndpoint> {
    return context.services.webhookEndpoints.get(actorOf(context), id);
  }

  @FieldResolver(() => WebhookDeliveryPage, { description: 'The endpoint’s deliveries, newest first, each with its attempts; batched across endpoints' })
  deliveries(
    @Root() endpoint: WebhookEndpoint,
    @Args(() => CursorPageArgs) args: CursorPageArgs,
    @Ctx() context: GraphQLContext,
  ): Promise<Page<WebhookDelivery>> {
    return loadersOf(context).webhooks.deliveryPage(endpoint.id, args);
  }

  @Mutation(() => WebhookEndpointWithSecret, {
    description:
      'Owner or admin only; the answer holds the signing secret, shown only here. A URL that is not https or resolves to a private address is BAD_USER_INPUT; needs CREDENTIALS_KEY (CONFLICT otherwise); at most 20 per organization (CONFLICT past that)',
  })
  createWebhookEndpoint(@Arg('input') input: CreateWebhookEndpointInput, @Ctx() context: GraphQLContext): Promise<WebhookEndpointWithSecret> {
    return context.services.webhookEndpoints.create(actorOf(context), input);
  }

  @Mutation(() => WebhookEndpoint, { description: 'Owner or admin only; changes the fields sent' })
  updateWebhookEndpoint(
    @Arg('id', () => ID) id: string,
    @Arg('input') input: UpdateWebhookEndpointInput,
    @Ctx() context: GraphQLContext,
  ): Promise<WebhookEndpoint> {
    return context.services.webhookEndpoints.update(actorOf(context), id, input);
  }

  @Mutation(() => DeletionResult, { description: 'Owner or admin only; the endpoint’s deliveries go with it' })
  async deleteWebhookEndpoint(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<DeletionResult> {
    await context.services.webhookEndpoints.delete(actorOf(context), id);
    return { id, message: `Webhook endpoint ${id} deleted` };
  }

  @Mutation(() => WebhookEndpointWithSecret, {
    description: 'Owner or admin only; a new signing secret, shown only in this answer; the old one keeps signing alongside it for 24 hours',
  })
  rotateWebhookEndpointSecret(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<WebhookEndpointWithSecret> {
    return context.services.webhookEndpoints.rotateSecret(actorOf(context), id);
  }

  @Mutation(() => WebhookDelivery, {
    description:
      'Owner or admin only; sends an event of the organization to the endpoint again (webhook-id stays the event id); a disabled endpoint is a CONFLICT',
  })
  createWebhookDelivery(
    @Arg('endpointId', () => ID) endpointId: string,
    @Arg('input') input: CreateWebhookDeliveryInput,
    @Ctx() context: GraphQLContext,
  ): Promise<WebhookDelivery> {
    return context.services.webhookDeliveries.resend(actorOf(context), endpointId, input);
  }

  @Mutation(() => WebhookDelivery, {
    description: 'Owner or admin only; sends a webhook.test event to this endpoint only (it is not in the event stream); a disabled endpoint is a CONFLICT',
  })
  testWebhookEndpoint(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<WebhookDelivery> {
    return context.services.webhookDeliveries.sendTest(actorOf(context), id);
  }
}
