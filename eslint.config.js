// @ts-check
import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import tseslint from 'typescript-eslint'

/**
 * The dependency rule, enforced: `cli/` (the composition root) is the only code that imports both processes.
 * `shared/` imports neither; `verifier/` never imports `control-plane/` nor a management-only plugin;
 * `control-plane/` never imports `verifier/` (it is handed what it needs by cli/assemble-control-plane.ts).
 * test/unit/layers.test.ts checks that these rules are on and catch a forbidden import.
 */
const folder = (name) => ({
  regex: `(^|/)${name}/`,
  message: `${name}/ is another layer: see README.md "Architecture" (only cli/ wires the processes together).`,
})
const MANAGEMENT_ONLY = ['@fastify/swagger', '@fastify/swagger-ui', '@fastify/rate-limit'].map((name) => ({
  name,
  message: 'a management-only plugin: the verifier sidecar must not load it.',
}))

/** no-restricted-imports for static imports, no-restricted-syntax for import() of the same folders. */
function layer(files, forbiddenFolders, forbiddenPackages = []) {
  const pattern = forbiddenFolders.join('|')
  return {
    files,
    rules: {
      'no-restricted-imports': ['error', { paths: forbiddenPackages, patterns: forbiddenFolders.map(folder) }],
      'no-restricted-syntax': [
        'error',
        {
          selector: `ImportExpression > Literal[value=/(^|\\u002F)(${pattern})\\u002F/]`,
          message: `import() of another layer (${forbiddenFolders.join(', ')}): see README.md "Architecture".`,
        },
      ],
    },
  }
}

export const layers = [
  layer(['shared/**/*.ts'], ['cli', 'control-plane', 'verifier', 'test', 'bench', 'deploy'], MANAGEMENT_ONLY),
  layer(['verifier/**/*.ts'], ['cli', 'control-plane', 'test', 'bench', 'deploy'], MANAGEMENT_ONLY),
  layer(['control-plane/**/*.ts'], ['cli', 'verifier', 'test', 'bench', 'deploy']),
  layer(['deploy/**/*.ts'], ['cli', 'control-plane', 'verifier', 'test', 'bench']),
]

export default tseslint.config(
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
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  { files: ['test/support/*.mjs'], languageOptions: { globals: { process: 'readonly' } } },
  ...layers,
)
