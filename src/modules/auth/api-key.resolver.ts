import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { createPageType, CursorPageArgs, type Page } from '../../common/pagination.js';
import { actorOf, type GraphQLContext } from '../../graphql/context.js';
import { ApiKey, CreatedApiKey } from './api-key.entity.js';
import { CreateApiKeyInput, UpdateApiKeyInput } from './api-key.inputs.js';
import { AccessToken, CurrentUser, DeletionResult } from './auth.types.js';

export const ApiKeyPage = createPageType(ApiKey, 'ApiKeyPage');

@Resolver(() => ApiKey)
export class ApiKeyResolver {
  @Query(() => CurrentUser, { description: 'The caller' })
  me(@Ctx() context: GraphQLContext): Promise<CurrentUser> {
    return context.services.auth.me(actorOf(context));
  }

  @Query(() => [ApiKey], { description: "A page of the caller's API keys, newest first, like GET /api/auth/api-keys; never with their secret" })
  async apiKeys(@Args(() => CursorPageArgs) args: CursorPageArgs, @Ctx() context: GraphQLContext): Promise<ApiKey[]> {
    return (await context.services.apiKeys.list(actorOf(context), args)).data;
  }

  @Query(() => ApiKeyPage, {
    description: 'The page `apiKeys` answers, with its meta: the total and the cursors to walk the list by (as REST’s X-Total-Count, Link and X-Next-Cursor)',
  })
  apiKeyPage(@Args(() => CursorPageArgs) args: CursorPageArgs, @Ctx() context: GraphQLContext): Promise<Page<ApiKey>> {
    return context.services.apiKeys.list(actorOf(context), args);
  }

  @Query(() => ApiKey)
  apiKey(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<ApiKey> {
    return context.services.apiKeys.get(actorOf(context), id);
  }

  @Mutation(() => AccessToken, { description: 'Exchanges the API key of the request (x-api-key) for a bearer token' })
  createAccessToken(@Ctx() context: GraphQLContext): AccessToken {
    return context.services.tokens.exchange(actorOf(context));
  }

  @Mutation(() => CreatedApiKey, { description: 'Creates a key; the answer carries its secret, shown only this once' })
  createApiKey(@Arg('input') input: CreateApiKeyInput, @Ctx() context: GraphQLContext): Promise<CreatedApiKey> {
    return context.services.apiKeys.create(actorOf(context), input);
  }

  @Mutation(() => ApiKey, { description: 'Changes only the fields that are sent' })
  updateApiKey(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateApiKeyInput, @Ctx() context: GraphQLContext): Promise<ApiKey> {
    return context.services.apiKeys.update(actorOf(context), id, input);
  }

  @Mutation(() => DeletionResult)
  deleteApiKey(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<DeletionResult> {
    return context.services.apiKeys.delete(actorOf(context), id);
  }
}
