import type { ApolloServerPlugin } from '@apollo/server';
import { getNamedType, getNullableType, GraphQLError, isListType, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { createRequire } from 'node:module';
import type { ComplexityEstimatorArgs, getComplexity as GetComplexity } from 'graphql-query-complexity';
import type { GraphQLContext } from './context.js';
import { isIntrospectionOnly } from './plugin.js';

// Its ESM build imports graphql's .mjs files, another module instance than the schema's: load the CommonJS build, as type-graphql does.
const { getComplexity } = createRequire(import.meta.url)('graphql-query-complexity') as { getComplexity: typeof GetComplexity };

/** The rows an unpaged list is assumed to hold when its field declares no size of its own. */
export const DEFAULT_LIST_SIZE = 20;

/**
 * What a field may declare in its GraphQL extensions (`@Extensions({ cost: … })`): `base`, what it
 * costs by itself (a search costs far more than a column), and `size`, the rows an unpaged list holds.
 */
export interface FieldCost {
  base?: number;
  size?: number;
}

/**
 * A field costs its base (1 unless declared) plus its selection times the rows it can answer:
 * a paged field (`XPage`) or a bounded array its `limit` argument (20 when omitted, as lists default),
 * a search its `topK`, an unpaged list its declared size (20 unless declared), anything else 1. `data` inside a
 * page is not counted again. Introspection costs nothing.
 */
export function estimateFieldCost({ type, field, args, childComplexity }: ComplexityEstimatorArgs): number {
  if (field.name.startsWith('__')) return 0;
  const declared = (field.extensions?.cost ?? {}) as FieldCost;
  const base = declared.base ?? 1;
  const returned = getNullableType(field.type);
  const named = getNamedType(field.type);
  let rows = 1;
  // Stryker disable next-line ConditionalExpression: equivalent, a page's other field (meta) is no list and counts once anyway
  if (type.name.endsWith('Page') && field.name === 'data') rows = 1;
  else if (named.name.endsWith('Page') && typeof args.limit === 'number') rows = args.limit;
  else if (isListType(returned))
    rows = typeof args.topK === 'number' ? args.topK : typeof args.limit === 'number' ? args.limit : (declared.size ?? DEFAULT_LIST_SIZE);
  return base + rows * childComplexity;
}

/** The cost of an operation, with its variables; introspection is free. */
export function operationCost(
  schema: GraphQLSchema,
  request: Parameters<typeof GetComplexity>[0]['query'],
  variables?: Record<string, unknown>,
  operationName?: string,
): number {
  return getComplexity({ schema, query: request, variables, operationName, estimators: [estimateFieldCost] });
}

type Document = Parameters<typeof GetComplexity>[0]['query'];

/** Costs kept per parsed document: at most this many variable sets each (the oldest goes first). */
const COSTS_PER_DOCUMENT = 64;
/** Variables longer than this (as JSON) are counted every time, not kept. */
const MAX_KEY_LENGTH = 2048;
const COSTS = new WeakMap<Document, Map<string, number>>();

/**
 * `operationCost`, remembered per parsed document (Apollo keeps one per query text) and per
 * operation name and variables: the cost is a function of those alone, and counting walks every
 * field of the operation, on every request.
 */
export function cachedOperationCost(schema: GraphQLSchema, document: Document, variables: Record<string, unknown>, operationName?: string): number {
  const key = `${operationName ?? ''}\u0000${JSON.stringify(variables)}`;
  if (key.length > MAX_KEY_LENGTH) return operationCost(schema, document, variables, operationName);
  let costs = COSTS.get(document);
  if (!costs) COSTS.set(document, (costs = new Map()));
  let cost = costs.get(key);
  if (cost === undefined) {
    cost = operationCost(schema, document, variables, operationName);
    if (costs.size >= COSTS_PER_DOCUMENT) costs.delete(costs.keys().next().value!);
    costs.set(key, cost);
  }
  return cost;
}

/**
 * Refuses, before any resolver runs, an operation whose cost is over `maxCost` with 400
 * BAD_USER_INPUT naming its cost. Runs once the operation and its variables are known.
 */
export function costLimitPlugin(maxCost: number): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, request, operation, operationName }) {
          // Stryker disable next-line ConditionalExpression: equivalent, introspection fields cost 0 anyway; this only skips counting them
          if (isIntrospectionOnly((operation as OperationDefinitionNode).selectionSet)) return;
          let cost: number;
          try {
            cost = cachedOperationCost(schema, document, request.variables ?? {}, operationName ?? undefined);
          } catch {
            return; // variables that do not fit the operation: execution refuses them with 400 before anything runs
          }
          if (cost > maxCost) {
            throw new GraphQLError(
              `The operation would cost ${cost}, over the limit of ${maxCost}: a list's selection counts once per row it may answer (its limit, 20 by default), a search counts ${SEARCH_COST} more; ask for smaller pages or fewer fields`,
              { extensions: { code: 'BAD_USER_INPUT', cost, maxCost, http: { status: 400 } } },
            );
          }
        },
      };
    },
  };
}

/** What one knowledge-base search costs besides its passages: its ranking reads many rows. */
export const SEARCH_COST = 1000;
