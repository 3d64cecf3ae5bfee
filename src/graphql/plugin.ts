import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, Kind, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import { AppError } from '../common/errors.js';
import { toAppError } from '../common/error-mapping.js';
import { logServerError } from '../common/logger.js';
import { clientWentAway } from '../platform/request-timeout.js';
import type { GraphQLContext } from './context.js';
import { toGraphQLError } from './errors.js';

/** An operation that reads only the schema (Sandbox's introspection) needs no credentials. */
export function isIntrospectionOnly(selectionSet: SelectionSetNode): boolean {
  return selectionSet.selections.every(
    (selection) =>
      (selection.kind === Kind.FIELD && selection.name.value.startsWith('__')) ||
      (selection.kind === Kind.INLINE_FRAGMENT && isIntrospectionOnly(selection.selectionSet)),
  );
}

/**
 * Refuses every operation without a principal before any resolver runs, so no resolver can
 * forget to; logs unexpected errors with the request id and puts that id on every error;
 * answers an unavailable database or provider with 503 and Retry-After.
 */
export function gatewayPlugin(): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ contextValue, operation, operationName }) {
          if (contextValue.authError) throw toGraphQLError(contextValue.authError);
          if (!contextValue.actor && !isIntrospectionOnly((operation as OperationDefinitionNode).selectionSet)) {
            throw toGraphQLError(new AppError('UNAUTHENTICATED', 'Authentication is required: send x-api-key or Authorization: Bearer'));
          }
          // Only now, and only for a caller who authenticated: an anonymous name never becomes a metric label.
          if (contextValue.actor) contextValue.onOperation?.(operationName);
        },
        async didEncounterErrors({ contextValue, errors }) {
          // Over the answer budget, the statements it stopped fail too: the answer is the refusal, nothing to log.
          if (contextValue.answerBudget?.exceeded) return;
          // The client went away: what failed was stopped on purpose, and nobody reads the answer.
          if (clientWentAway(contextValue.signal)) return;
          for (const error of errors) {
            if (!error.originalError || error.originalError instanceof GraphQLError) continue;
            const mapped = toAppError(error.originalError);
            if (mapped.logDetail)
              contextValue.logger.info({ requestId: contextValue.requestId, code: mapped.code, ...mapped.logDetail }, 'GraphQL operation refused');
            if (mapped.status >= 500) {
              logServerError(contextValue.logger, mapped, error.originalError, { requestId: contextValue.requestId }, 'GraphQL operation failed');
            }
          }
        },
        async willSendResponse({ contextValue, response }) {
          // Over the answer budget: what resolved is dropped, not serialized; the door answers the refusal alone.
          const refusal = contextValue.answerBudget?.exceeded;
          if (refusal && response.body.kind === 'single') {
            response.body.singleResult = { errors: [{ message: refusal.message, extensions: { code: refusal.code, requestId: contextValue.requestId } }] };
            response.http.status = refusal.status;
            return;
          }
          if (response.body.kind === 'single' && response.body.singleResult.errors) {
            const { data, errors } = response.body.singleResult;
            for (const error of errors) {
              Object.assign(error, { extensions: { ...error.extensions, requestId: contextValue.requestId } });
            }
            // A lost database or provider: Retry-After as on REST, and 503 when nothing was answered
            // (a response with partial data stays 2xx, as GraphQL over HTTP asks).
            if (errors.some((error) => error.extensions?.code === 'UNAVAILABLE')) {
              response.http.headers.set('retry-after', '5');
              if (data === null || data === undefined) response.http.status = 503;
            }
          }
        },
      };
    },
  };
}
