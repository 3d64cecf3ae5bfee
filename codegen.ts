import type { CodegenConfig } from '@graphql-codegen/cli';

const shared = {
  scalars: { DateTimeISO: 'string', JSONObject: 'Record<string, unknown>' },
  enumsAsTypes: true,
  useTypeImports: true,
  avoidOptionals: { field: true, inputValue: false, object: true },
};

/**
 * Typed documents from the checked-in SDL: the tests' graphql-request client's, and the console's
 * (as strings, so the browser bundle carries no GraphQL parser; committed, so a fresh clone builds it).
 */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  generates: {
    'test/generated/graphql.ts': {
      documents: ['test/graphql/**/*.graphql'],
      plugins: ['typescript-operations', 'typed-document-node'],
      config: shared,
    },
    'console/src/api/generated.ts': {
      documents: ['console/src/api/operations/*.graphql'],
      plugins: ['typescript-operations', 'typed-document-node'],
      config: { ...shared, documentMode: 'string' },
    },
  },
  silent: true,
};

export default config;
