/**
 * Marks a GraphQL field (`@Extensions(GRAPHQL_ONLY)`) that the REST door does not show: a relation
 * resolved on GraphQL only, whose id REST shows instead. Neither the presenter nor the OpenAPI document has it.
 */
export const GRAPHQL_ONLY = { graphqlOnly: true } as const;

/** Whether a field's extensions carry the GRAPHQL_ONLY mark. */
export function isGraphqlOnly(extensions: Readonly<Record<string, unknown>> | null | undefined): boolean {
  return extensions?.graphqlOnly === true;
}
