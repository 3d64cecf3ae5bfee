// typescript-eslint's recommended rules over the gateway's TypeScript, and the type-aware rules that
// catch what reviews keep finding (a promise nobody awaits — security review 4's H1 — or one handed
// where its rejection is dropped). Run from the repository root: `npm run lint`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      '**/node_modules/**',
      'coverage/**',
      'sdk/dist/**',
      '**/generated/**',
      'console/src/api/generated.ts',
      'tools/**',
      'test/bench/**',
      'console/dist/**',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: process.cwd() },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      // A leading underscore names what is left out on purpose (a destructured column, an unused parameter of a signature).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': ['error', { ignoreRestArgs: true }],
      // A `let x!: T` a callback reads before the line that assigns it cannot be const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // type-graphql's and class-validator's metadata APIs take and answer classes as `Function`.
      '@typescript-eslint/no-unsafe-function-type': 'off',
    },
  },
  {
    // Tests read the doors' JSON answers, which are untyped by nature; the source keeps `any` out.
    files: ['test/**/*.ts', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.{js,mjs}'],
    languageOptions: {
      globals: {
        process: 'readonly',
        setImmediate: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        performance: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
  },
);
