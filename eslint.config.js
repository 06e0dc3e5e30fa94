// ESLint (flat config). The rules that matter most guard the architecture: src/ is a library
// that loads no CLI or UI package and nothing from commands/; no promise is left floating; no
// dead code. Type-aware rules read tsconfig.eslint.json, which also covers tests and scripts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { existsSync } from 'node:fs';

const UI_PACKAGES = ['commander', 'ink', 'ink-*', 'react', 'react/*', 'react-*', 'chalk', 'cli-table3', 'execa'];

/** What no file of src/ imports (a CLI or UI package, commands/). */
const LIBRARY_PATTERNS = [
  { group: UI_PACKAGES, message: 'src/ is the library: it imports no CLI or UI package (render in commands/).' },
  {
    group: ['**/commands', '**/commands/**'],
    message: 'src/ must not import from commands/ (commands/ builds on src/, not the reverse).',
  },
];

/** For each folder of src/, the folders above it that it must not import (no cycle between folders). */
const LAYERS_ABOVE = {
  chains: ['status', 'rollout-read', 'watch', 'export'],
  facts: ['status', 'rollout-read', 'watch', 'export'],
  status: ['rollout-read', 'watch', 'export'],
  'rollout-read': ['watch', 'export'],
};

/** The largest file and function of src/ and commands/, in lines (docs/architecture.md). */
const MAX_FILE_LINES = 600;
const MAX_FUNCTION_LINES = 120;

/**
 * The files allowed past those sizes, each with the decision record that says why (a path of
 * docs/decisions/): none.
 */
const SIZE_EXCEPTIONS = {};
for (const [file, record] of Object.entries(SIZE_EXCEPTIONS))
  if (!existsSync(new URL(record, import.meta.url))) throw new Error(`${file}: no decision record ${record}`);

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'fixtures/**', 'man/**', 'coverage/**'] },

  js.configs.recommended,
  ...tseslint.configs.recommended,

  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: {
        // Node's globals, by name (the project runs only on Node).
        process: 'readonly',
        Buffer: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        clearImmediate: 'readonly',
        queueMicrotask: 'readonly',
        structuredClone: 'readonly',
        URL: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        SharedArrayBuffer: 'readonly',
        Atomics: 'readonly',
        performance: 'readonly',
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `==` only where Python's mixed int/bigint equality is meant, each time with a directive.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'none',
          ignoreRestSiblings: true,
        },
      ],
    },
  },

  // Type-aware rules for TypeScript.
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { project: './tsconfig.eslint.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },

  // Tests read JSON documents from child processes (python3, the binary) and probe them loosely.
  {
    files: ['test/**/*.ts', 'test/**/*.tsx'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },

  // The library: no CLI/UI package, nothing from commands/, no environment, no stdio (the
  // command context passes options down and renders what the library returns).
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['env', 'argv', 'stdin', 'stdout', 'stderr', 'exit', 'exitCode'].map((property) => ({
          object: 'process',
          property,
          message: 'src/ is the library: it reads no environment and writes no stdio (take options from the caller).',
        })),
      ],
      'no-console': 'error',
      'no-restricted-imports': [
        'error',
        {
          paths: ['process', 'node:process'].map((name) => ({
            name,
            message: 'src/ is the library: it reads no process state (take options from the caller).',
          })),
          patterns: LIBRARY_PATTERNS,
        },
      ],
    },
  },
  // No import cycle between files either (a cycle between folders is what the layers above
  // forbid): every file of src/ and commands/ can be read after the files it imports.
  {
    files: ['src/**/*.ts', 'commands/**/*.ts', 'commands/**/*.tsx'],
    plugins: { 'import-x': importX },
    settings: {
      // import-x reads each imported file with the TypeScript parser to follow its imports.
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/extensions': ['.ts', '.tsx', '.js'],
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: { 'import-x/no-cycle': 'error' },
  },
  // Units small enough to hold in one's head (docs/architecture.md): files and functions of
  // src/ and commands/ within the sizes above, but for the exceptions with a decision record.
  {
    files: ['src/**/*.ts', 'commands/**/*.ts', 'commands/**/*.tsx'],
    ignores: Object.keys(SIZE_EXCEPTIONS),
    rules: {
      'max-lines': ['error', { max: MAX_FILE_LINES, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': [
        'error',
        { max: MAX_FUNCTION_LINES, skipBlankLines: false, skipComments: false, IIFEs: true },
      ],
    },
  },
  // The layers of docs/architecture.md: the pure rules of src/status read nothing, the one reading
  // of a rollout (src/rollout-read) sits above build, facts and status, and the results (watch,
  // export) above it. An import against the order would bring back a folder cycle.
  ...Object.entries(LAYERS_ABOVE).map(([folder, above]) => ({
    files: [`src/${folder}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['process', 'node:process'].map((name) => ({
            name,
            message: 'src/ is the library: it reads no process state (take options from the caller).',
          })),
          patterns: [
            ...LIBRARY_PATTERNS,
            ...above.map((up) => ({
              group: [`**/${up}/**`],
              message: `src/${folder} is below src/${up} (docs/architecture.md): import the other way round.`,
            })),
          ],
        },
      ],
    },
  })),
);
