// `npm run lint`. Type-aware: the rules that matter here (floating and misused promises) need the
// types, which typescript-eslint's project service takes from tsconfig.json.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['dist/', '.cluster/', 'infra/imports/']),
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // node:test's test() and describe() return promises that the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] },
      ],
      // The same exemptions as tsc's noUnusedParameters and noUnusedLocals: `_name` parameters that
      // an interface requires, and properties destructured only to leave them out of the rest.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Rejecting with a value of unknown type (a caught error, an AbortSignal's reason) passes it on
      // unchanged, as `throw err` does, which only-throw-error allows.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // `async` without `await` is how a synchronous body meets a Promise-returning interface (fakes,
      // no-op recorders); the promise rules above catch the mistakes an unneeded `async` could hide.
      '@typescript-eslint/require-await': 'off',
    },
  },
);
