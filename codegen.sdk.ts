import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * The SDK's typed GraphQL documents (`npm run sdk`), from the checked-in SDL and sdk/graphql/.
 * Documents are plain strings (documentMode "string"), so the SDK sends them with fetch and needs
 * no graphql runtime. SDK_GRAPHQL_OUT writes elsewhere (the test that compares with the checked-in file).
 */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['sdk/graphql/**/*.graphql'],
  generates: {
    [process.env.SDK_GRAPHQL_OUT ?? 'sdk/src/generated/graphql.ts']: {
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        documentMode: 'string',
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
