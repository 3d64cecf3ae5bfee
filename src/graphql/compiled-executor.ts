import type { GatewayExecutor, GatewayInterface } from '@apollo/server-gateway-interface';
import { execute, getVariableValues, GraphQLError, printSchema, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { MetadataStorage } from '@mikro-orm/core';
import type { GraphQLContext } from './context.js';
import { sqlAnswer } from './sql-answers.js';

// graphql-js walks every field of every row through a generic executor (argument coercion, a promise
// check, a result object per field); on a nested page that is thousands of fields. graphql-jit compiles
// each operation once into a function that does the same walk for that operation only. Apollo Server
// lets another executor run through its `gateway` option; parsing, validation, the plugins (armor,
// cost, authentication) and error formatting stay Apollo's.

/** Compiled operations per parsed document: Apollo keeps one DocumentNode per query text (its LRU), so these go with it. */
const compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery | null>>();

function compiledFor(schema: GraphQLSchema, document: DocumentNode, operationName: string | null): CompiledQuery | null {
  let byName = compiled.get(document);
  if (!byName) {
    byName = new Map();
    compiled.set(document, byName);
  }
  const key = operationName ?? '';
  if (!byName.has(key)) {
    const result = compileQuery(schema, document, operationName ?? undefined);
    // What graphql-jit cannot compile runs on graphql-js.
    byName.set(key, isCompiledQuery(result) ? result : null);
  }
  return byName.get(key)!;
}

/** `metadata`: the ORM's, for the queries the database answers whole (src/graphql/sql-answers.ts); without it, none is. */
export function compiledExecutor(schema: GraphQLSchema, metadata?: MetadataStorage): GatewayExecutor {
  return async ({ document, operation, operationName, request, context }) => {
    const variables = request.variables ?? {};
    // Variables are coerced by graphql-js first, so a bad variable is refused with graphql-js's own
    // error (Apollo answers it 400 BAD_USER_INPUT), exactly as without the compiled executor.
    if (operation.variableDefinitions?.length) {
      const coerced = getVariableValues(schema, operation.variableDefinitions, variables);
      if (coerced.errors) return { errors: coerced.errors };
    }
    if (metadata) {
      const answer = await sqlAnswer(schema, metadata, document, operation, variables, context as GraphQLContext);
      if (answer) return answer;
    }
    const query = compiledFor(schema, document, operationName);
    if (!query) return execute({ schema, document, contextValue: context, variableValues: variables, operationName }) as never;
    return asGraphQLJsErrors(await query.query(undefined, context, variables));
  };
}

/**
 * graphql-jit reports errors as its own read-only objects; Apollo's plugins (armor's field-suggestion
 * mask) and error formatting expect graphql-js's GraphQLError, so each becomes one, with the same
 * message, path, locations, extensions and original error.
 */
function asGraphQLJsErrors(result: ExecutionResult): ExecutionResult {
  if (!result.errors?.length) return result;
  const errors = result.errors.map((error) => {
    const converted = new GraphQLError(error.message, {
      path: error.path,
      originalError: error.originalError ?? undefined,
      extensions: error.extensions,
    });
    if (error.locations) Object.assign(converted, { locations: error.locations });
    return converted;
  });
  return { ...result, errors };
}

/** The `gateway` Apollo Server takes: a fixed schema and the compiled executor. */
export function compiledGateway(schema: GraphQLSchema, metadata?: MetadataStorage): GatewayInterface {
  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: printSchema(schema) });
      return () => undefined;
    },
    async load() {
      return { executor: compiledExecutor(schema, metadata) };
    },
    async stop() {},
  };
}
