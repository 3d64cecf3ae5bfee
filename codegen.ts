import type { CodegenConfig } from '@graphql-codegen/cli';

/** Typed documents for the tests' graphql-request client, from the checked-in SDL. */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['test/graphql/**/*.graphql'],
  generates: {
    'test/generated/graphql.ts': {
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        scalars: { DateTimeISO: 'string', JSONObject: 'Record<string, unknown>' },
        enumsAsTypes: true,
        useTypeImports: true,
        avoidOptionals: { field: true, inputValue: false, object: true },
      },
    },
  },
  silent: true,
};

export default config;
