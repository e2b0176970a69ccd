// @ts-check
import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import { defineConfig } from 'eslint/config'
import { posix, relative, sep } from 'node:path'
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
/**
 * The store's implementations: only cli/ (the composition root) picks one; the processes see the Store's parts. Each
 * part has a folder (store/<part>/: its interface, memory- and redis- implementations); store/redis/ holds what the
 * Redis implementations share.
 */
const STORE_IMPLEMENTATIONS = {
  regex: '(^|/)store/(([a-z-]+/)?(memory-|redis-)|redis/|backend\\.js$)',
  message: `a store implementation: the processes are handed a Store by cli/, the composition root (${SEE}).`,
  // The same, for import(): esquery's regular expressions cannot hold a slash, hence SLASH.
  dynamic: `(^|${SLASH})store${SLASH}(([a-z-]+${SLASH})?(memory-|redis-)|redis${SLASH}|backend)`,
}
/** The analytics engine's implementations: handed to the control plane by cli/, as a store is. */
const ENGINE_IMPLEMENTATIONS = {
  regex: '(^|/)(chdb|clickhouse-server)-engine\\.js$',
  message: `an analytics engine implementation: the control plane is handed its AnalyticsEngine by cli/ (${SEE}).`,
  dynamic: `(^|${SLASH})(chdb|clickhouse-server)-engine`,
}
/** ClickHouse's clients: the control plane's alone (a verifier hands its rows to Redis and never loads them). */
const ANALYTICS_CLIENTS = {
  regex: '^(chdb|@clickhouse/client)(/|$)',
  message: "ClickHouse's client: the control plane's analytics engine alone loads it, never the verifier.",
}
/**
 * What a domain's operations and rules (control-plane/<domain>/**) may not know: HTTP, the wire formats' schemas
 * (any `wire/` folder) and adapters, the API reference. The adapters beside them (`*.v1.ts`, `*.v2.ts`), the
 * domain's route list (`routes.ts`) and its `wire/` folder are where those live.
 */
const WIRE_MODULES = [
  { regex: '^(fastify|typebox|@fastify/.*)$', message: 'an operation knows no HTTP nor schema: its adapters do.' },
  {
    regex: '(^|/)(http|openapi|wire)/',
    message: 'an operation knows no wire format: its adapters do.',
    dynamic: `(^|${SLASH})(http|openapi|wire)${SLASH}`,
  },
]

/**
 * The control plane's domains (each folder holds a domain's rules, its operations and their adapters) and, for each,
 * the domains it may import: the one table the linter holds every file of a domain to (keygate/domain-imports, below),
 * taken from what the code imports. `node scripts/architecture-picture.mjs --domains` measures those imports, each
 * with the files that make it, and the cycles among them.
 */
export const DOMAIN_IMPORTS = {
  analytics: ['root-keys'],
  apis: ['keys', 'root-keys'],
  audit: [],
  identities: ['analytics', 'keys', 'root-keys'],
  keys: ['analytics', 'leaks', 'permissions', 'root-keys'],
  leaks: ['audit', 'root-keys'],
  migrations: ['keys', 'permissions', 'root-keys'],
  permissions: ['audit', 'root-keys'],
  portal: ['analytics', 'audit', 'keys', 'root-keys'],
  ratelimits: ['root-keys'],
  'root-keys': ['audit'],
  webhooks: ['analytics', 'keys', 'root-keys'],
}
export const DOMAINS = Object.keys(DOMAIN_IMPORTS)

/** The domain a repository path is in (`keys` for control-plane/keys/rules/expires.ts), or undefined. */
function domainOf(path) {
  const [top, folder, ...rest] = path.split('/')
  return top === 'control-plane' && rest.length > 0 && Object.hasOwn(DOMAIN_IMPORTS, folder) ? folder : undefined
}

/**
 * keygate/domain-imports: a domain's files import only the domains DOMAIN_IMPORTS lists for it. A rule of its own, as
 * no-restricted-imports matches the import's text: this one resolves it against the importing file, so that
 * `../keys/` from a domain's folder and `../../keys/` from its subfolders are the keys domain, and shared/keys/ is not.
 */
const domainImports = {
  meta: {
    type: 'problem',
    docs: { description: 'A control-plane domain imports only the domains DOMAIN_IMPORTS lists for it.' },
    schema: [],
  },
  create(context) {
    const file = relative(import.meta.dirname, context.filename).replaceAll(sep, '/')
    const from = domainOf(file)
    if (from === undefined) return {}
    const allowed = DOMAIN_IMPORTS[from]
    const check = (source) => {
      if (source?.type !== 'Literal' || typeof source.value !== 'string' || !source.value.startsWith('.')) return
      const to = domainOf(posix.join(posix.dirname(file), source.value))
      if (to === undefined || to === from || allowed.includes(to)) return
      context.report({
        node: source,
        message:
          `the ${from} domain may import ${allowed.join(', ') || 'no other domain'}, not ${to}/: what each domain ` +
          'may import is one table, DOMAIN_IMPORTS in eslint.config.js (see docs/architecture.md).',
      })
    }
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportType: (node) => check(node.source),
      TSExternalModuleReference: (node) => check(node.expression),
    }
  },
}

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

/**
 * What the console's ui/ folder may take of the rest of the console: format.ts and the generated shapes (generated/),
 * nothing else (the API client, the session, the pages), so that the portal can share all of ui/. What ui/ needs of
 * the console's API is passed in: a loader as a prop, the way errors are said as a context (ui/error-words.tsx).
 */
const OUTSIDE_CONSOLE_UI = {
  regex: '^\\.\\./(?!format\\.js$|generated/)',
  message:
    "the console's own code outside ui/: the portal shares ui/, which may take only ui/, format.ts and generated/ (pass the rest in).",
  dynamic: `^[.][.]${SLASH}(?!format[.]js$|generated${SLASH})`,
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
    packages: [MANAGEMENT_ONLY, ANALYTICS_CLIENTS],
  }),
  layer(['verifier/**/*.ts'], ['cli', 'control-plane', 'test', 'bench', 'deploy'], {
    packages: [MANAGEMENT_ONLY, STORE_IMPLEMENTATIONS, ANALYTICS_CLIENTS],
  }),
  layer(['control-plane/**/*.ts'], ['cli', 'verifier', 'test', 'bench', 'deploy'], {
    packages: [STORE_IMPLEMENTATIONS, ENGINE_IMPLEMENTATIONS],
  }),
  // A domain's operations and rules, in its folder and its subfolders: the control plane's rule, and no wire format
  // (the adapters beside them, routes.ts and the domain's wire/ folder have one).
  layer(
    DOMAINS.map((domain) => `control-plane/${domain}/**/*.ts`),
    ['cli', 'verifier', 'test', 'bench', 'deploy'],
    {
      packages: [STORE_IMPLEMENTATIONS, ENGINE_IMPLEMENTATIONS, ...WIRE_MODULES],
      ignores: [
        ...DOMAINS.flatMap((domain) => [
          `control-plane/${domain}/**/*.v[12].ts`,
          `control-plane/${domain}/**/routes.ts`,
          `control-plane/${domain}/**/wire/**`,
        ]),
      ],
    },
  ),
  // Each domain imports only the domains DOMAIN_IMPORTS lists for it, from any of its files.
  {
    files: DOMAINS.map((domain) => `control-plane/${domain}/**/*.ts`),
    plugins: { keygate: { rules: { 'domain-imports': domainImports } } },
    rules: { 'keygate/domain-imports': 'error' },
  },
  // Tools, not a process: they may compute a module path (deploy/check reads schemas by kind).
  layer(['deploy/**/*.ts'], ['cli', 'control-plane', 'verifier', 'test', 'bench'], { processCode: false }),
  // The admin console runs in a browser and knows Keygate only by its wire API, as any other client: no server code.
  layer(
    ['console/**/*.ts', 'console/**/*.tsx'],
    ['cli', 'control-plane', 'verifier', 'shared', 'test', 'bench', 'deploy'],
  ),
  // The console's ui/, which the portal shares: the console's rule, and of the console only ui/, format.ts and the
  // generated shapes (after the console's rule, which it replaces for ui/).
  layer(
    ['console/src/ui/**/*.ts', 'console/src/ui/**/*.tsx'],
    ['cli', 'control-plane', 'verifier', 'shared', 'test', 'bench', 'deploy'],
    { packages: [OUTSIDE_CONSOLE_UI] },
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
