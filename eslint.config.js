// @ts-check
import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import { defineConfig } from 'eslint/config'
import tseslint from 'typescript-eslint'

/**
 * The dependency rule, enforced: `cli/` (the composition root) is the only code that imports both processes.
 * `shared/` imports neither; `verifier/` never imports `control-plane/` nor a management-only plugin;
 * `control-plane/` never imports `verifier/` (it is handed what it needs by cli/assemble-control-plane.ts); the
 * part of `cli/` that `keygate verifier` loads imports nothing of the control plane's. Only paths the linter can
 * read can be checked, so the processes' code writes every import as a plain string: no computed import(), no
 * require(). test/unit/layers.test.ts checks that these rules are on and catch each form of a forbidden import.
 */
const SEE = 'see docs/architecture.md (only cli/ wires the processes together)'
const folder = (name) => ({ regex: `(^|/)${name}/`, message: `${name}/ is another layer: ${SEE}.` })
const MANAGEMENT_ONLY = {
  regex: '^@fastify/(swagger|swagger-ui|rate-limit)(/|$)',
  message: 'a management-only plugin: the verifier sidecar must not load it.',
}
/** The modules of cli/ that only the control plane, dev and root-key commands load. */
const CLI_MANAGEMENT = {
  regex: '^\\./(control-plane-command|dev-command|root-key-[a-z-]+|assemble-control-plane|write-openapi)\\.js$',
  message: `a module of the control plane's side of cli/: keygate verifier would load it (import() it lazily, as commands.ts does): ${SEE}.`,
}
const SLASH = '\\u002F'
/** The store's implementations: only cli/ (the composition root) picks one; the processes see the Store's parts. */
const STORE_IMPLEMENTATIONS = {
  regex: '(^|/)store/(memory-|redis-|backend\\.js$)',
  message: `a store implementation: the processes are handed a Store by cli/, the composition root (${SEE}).`,
  // The same, for import(): esquery's regular expressions cannot hold a slash, hence SLASH.
  dynamic: `(^|${SLASH})store${SLASH}(memory-|redis-|backend)`,
}
/**
 * What an operation (control-plane/operations/<service>/<operation>.ts) may not know: HTTP, the wire formats'
 * schemas and adapters, the API reference. Its adapters (`*.v1.ts`, `*.v2.ts`) are where those live.
 */
const WIRE_MODULES = [
  { regex: '^(fastify|typebox|@fastify/.*)$', message: 'an operation knows no HTTP nor schema: its adapters do.' },
  {
    regex: '(^|/)(http|openapi|v2)/',
    message: 'an operation knows no wire format: its adapters do.',
    dynamic: `(^|${SLASH})(http|openapi|v2)${SLASH}`,
  },
  {
    regex: '(^|/)management-route\\.js$',
    message: 'an operation knows no route: its adapters declare them.',
    dynamic: `(^|${SLASH})management-route[.]js$`,
  },
]

/** Imports the linter cannot read the path of, refused in the processes' code. */
const UNCHECKABLE = [
  {
    selector: "ImportExpression[source.type!='Literal']",
    message: `import() of a computed path: the layer rule cannot check it; import a module named by a plain string (${SEE}).`,
  },
  {
    selector: "CallExpression[callee.name='require'], CallExpression[callee.name='createRequire']",
    message: `require(): the layer rule cannot check it; use import (${SEE}).`,
  },
]

/**
 * A layer: no-restricted-imports for static imports and re-exports (type-only ones too), no-restricted-syntax
 * for import() of the same folders and, in the processes' code, for imports whose path cannot be read.
 */
function layer(files, forbiddenFolders, { packages = [], processCode = true, ignores = [] } = {}) {
  const pattern = forbiddenFolders.join('|')
  return {
    files,
    ignores,
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [...forbiddenFolders.map(folder), ...packages.map(({ regex, message }) => ({ regex, message }))] },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: `ImportExpression > Literal[value=/(^|${SLASH})(${pattern})${SLASH}/]`,
          message: `import() of another layer (${forbiddenFolders.join(', ')}): ${SEE}.`,
        },
        ...packages.flatMap(({ dynamic, message }) =>
          dynamic ? [{ selector: `ImportExpression > Literal[value=/${dynamic}/]`, message }] : [],
        ),
        ...(processCode ? UNCHECKABLE : []),
      ],
    },
  }
}

/** What the portal's page may not take of the console: anything but its ui/ folder and format.ts. */
const CONSOLE_BUT_ITS_UI = {
  regex: '(^|/)console/src/(?!ui/|format\\.js$)',
  message:
    "the console's own code (its API client holds a root key): the portal may share only console/src/ui/ and format.ts.",
  dynamic: `(^|${SLASH})console${SLASH}src${SLASH}(?!ui${SLASH}|format[.]js$)`,
}

/** The modules `keygate verifier` loads from cli/: the bin, the command table, and the verifier's own. */
const CLI_VERIFIER_SIDE = [
  'cli/keygate.ts',
  'cli/command-line.ts',
  'cli/commands.ts',
  'cli/serve.ts',
  'cli/verifier-command.ts',
  'cli/assemble-verifier.ts',
]

export const layers = [
  layer(['shared/**/*.ts'], ['cli', 'control-plane', 'verifier', 'test', 'bench', 'deploy'], {
    packages: [MANAGEMENT_ONLY],
  }),
  layer(['verifier/**/*.ts'], ['cli', 'control-plane', 'test', 'bench', 'deploy'], {
    packages: [MANAGEMENT_ONLY, STORE_IMPLEMENTATIONS],
  }),
  layer(['control-plane/**/*.ts'], ['cli', 'verifier', 'test', 'bench', 'deploy'], {
    packages: [STORE_IMPLEMENTATIONS],
  }),
  // An operation: the control plane's rule, and no wire format (the adapters beside it and routes.ts have one).
  layer(['control-plane/operations/*/*.ts'], ['cli', 'verifier', 'test', 'bench', 'deploy'], {
    packages: [STORE_IMPLEMENTATIONS, ...WIRE_MODULES],
    ignores: ['control-plane/operations/*/*.v[12].ts', 'control-plane/operations/*/routes.ts'],
  }),
  // Tools, not a process: they may compute a module path (deploy/check reads schemas by kind).
  layer(['deploy/**/*.ts'], ['cli', 'control-plane', 'verifier', 'test', 'bench'], { processCode: false }),
  // The admin console runs in a browser and knows Keygate only by its wire API, as any other client: no server code.
  layer(
    ['console/**/*.ts', 'console/**/*.tsx'],
    ['cli', 'control-plane', 'verifier', 'shared', 'test', 'bench', 'deploy'],
  ),
  // The customer portal's page: the same, and of the console only its wire-agnostic parts (its ui/ and formats),
  // never its API client, which holds a root key.
  layer(
    ['portal/**/*.ts', 'portal/**/*.tsx'],
    ['cli', 'control-plane', 'verifier', 'shared', 'test', 'bench', 'deploy'],
    { packages: [CONSOLE_BUT_ITS_UI] },
  ),
  {
    // Static imports only: commands.ts loads each command with import() when it runs, which is the point.
    files: CLI_VERIFIER_SIDE,
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [folder('control-plane'), folder('test'), folder('bench'), MANAGEMENT_ONLY, CLI_MANAGEMENT] },
      ],
    },
  },
]

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', '.tmp/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  // Formatting is Prettier's: the rules it would fight are off (max-len is turned back on below, for comments).
  prettier,
  {
    languageOptions: {
      // tsconfig.check.json covers every TypeScript file here, tests and bench included.
      parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    rules: {
      // Fastify handlers and hooks are async by contract (a returned value is the answer), with or without an await.
      '@typescript-eslint/require-await': 'off',
      // Prettier wraps code at 120; comments too must fit (strings may not be broken, as Prettier will not).
      'max-len': [
        'error',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true },
      ],
      // `_name` marks a parameter or a destructured field left out on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Tests and benchmarks read JSON answers as they come (any) and assert on them; the product code may not.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Browser code, type-checked against the DOM by its own project (console/tsconfig.json).
    files: ['console/**/*.ts', 'console/**/*.tsx'],
    languageOptions: {
      parserOptions: { project: './console/tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    files: ['portal/**/*.ts', 'portal/**/*.tsx'],
    languageOptions: {
      parserOptions: { project: './portal/tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  { files: ['test/support/*.mjs'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
  // The build and lint scripts run on Node.
  {
    files: ['scripts/*.mjs', 'portal/*.mjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', performance: 'readonly' },
    },
  },
  ...layers,
)
