import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ESLint, type Linter } from 'eslint'
import tseslint from 'typescript-eslint'
import { describe, expect, it } from 'vitest'

/**
 * The dependency rule (docs/architecture.md) is enforced by the linter that `npm test` runs: these tests
 * read the rules the project's ESLint configuration gives each layer, and show that they refuse a forbidden
 * import (static, type-only or dynamic) and let the allowed ones through.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const LAYER_RULES = ['no-restricted-imports', 'no-restricted-syntax'] as const

interface Layer {
  /** A file of the layer (need not exist: only its path selects the rules). */
  file: string
  forbidden: string[]
  allowed: string[]
}

const LAYERS: Layer[] = [
  {
    file: 'verifier/probe.ts',
    forbidden: [
      '../control-plane/app.js',
      '../cli/assemble-verifier.js',
      '@fastify/swagger',
      '@fastify/swagger-ui/index.js',
      '@fastify/rate-limit',
      'keygate/dist/control-plane/app.js',
      '../shared/store/redis-store.js',
      '../shared/store/memory-api-key-store.js',
      '../shared/store/backend.js',
    ],
    allowed: ['../shared/store/verifier-store.js', '../shared/store/store.js', './key-cache.js', 'fastify', 'undici'],
  },
  {
    file: 'control-plane/routes/probe.ts',
    forbidden: [
      '../../verifier/key-verifier.js',
      '../../cli/assemble-control-plane.js',
      '../../shared/store/redis-entity-store.js',
      '../../shared/store/backend.js',
    ],
    allowed: ['../../shared/errors.js', '../key-writes.js', '../../shared/store/store.js', '@fastify/swagger'],
  },
  {
    // An operation knows no wire format: HTTP, schemas' library, adapters and the reference are its adapters'.
    file: 'control-plane/operations/keys/probe.ts',
    forbidden: [
      'fastify',
      'typebox',
      '@fastify/swagger',
      '../../../shared/http/v2-route.js',
      '../../openapi/operation-doc.js',
      '../../v2/key-data.js',
      '../../management-route.js',
      '../../../verifier/key-verifier.js',
      '../../../shared/store/memory-store.js',
    ],
    allowed: ['../../../shared/errors.js', '../../caller.js', '../../root-key-auth.js', './get-key.js'],
  },
  {
    // Its adapters are where the wire formats live.
    file: 'control-plane/operations/keys/probe.v2.ts',
    forbidden: ['../../../verifier/key-verifier.js', '../../../shared/store/redis-store.js'],
    allowed: ['typebox', '../../management-route.js', '../../v2/key-data.js', './get-key.js'],
  },
  {
    file: 'shared/http/probe.ts',
    forbidden: ['../../verifier/app.js', '../../control-plane/app.js', '../../cli/keygate.js', '@fastify/swagger-ui'],
    allowed: ['../store/verifier-store.js', './error-body.js', 'fastify'],
  },
  {
    // The browser's code: a client of the wire API, like any other.
    file: 'console/src/probe.ts',
    forbidden: [
      '../../shared/errors.js',
      '../../control-plane/app.js',
      '../../verifier/app.js',
      '../../cli/keygate.js',
    ],
    allowed: ['./api.js', './ui/page.js', 'preact', 'preact/hooks', 'uplot'],
  },
  {
    // The customer portal's page: a client of the wire API, sharing only the console's ui/ and formats.
    file: 'portal/src/probe.ts',
    forbidden: [
      '../../shared/errors.js',
      '../../control-plane/app.js',
      '../../cli/keygate.js',
      '../../console/src/api.js',
      '../../console/src/session.js',
      '../../console/src/pages/keys.js',
    ],
    allowed: [
      './portal-api.js',
      '../../console/src/ui/shown-once.js',
      '../../console/src/format.js',
      'preact',
      'preact/hooks',
    ],
  },
  {
    file: 'deploy/check/probe.ts',
    forbidden: ['../../control-plane/app.js', '../../verifier/app.js'],
    allowed: ['../../shared/config/config.js', './problem.js'],
  },
]

/** Files of the processes' code, where every import must name its module by a plain string. */
const PROCESS_FILES = ['verifier/probe.ts', 'control-plane/probe.ts', 'shared/probe.ts']

/** The layer rules the project's configuration applies to `file`. */
async function layerRulesOf(file: string): Promise<Partial<Linter.RulesRecord>> {
  const config = (await new ESLint({ cwd: ROOT }).calculateConfigForFile(join(ROOT, file))) as Linter.Config
  return Object.fromEntries(LAYER_RULES.flatMap((rule) => (config.rules?.[rule] ? [[rule, config.rules[rule]]] : [])))
}

/** Lints `code` as if it were `file`, with only the layer rules (no type information needed). */
async function layerProblems(file: string, code: string): Promise<string[]> {
  const rules = await layerRulesOf(file)
  const linter = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules }],
  })
  const [result] = await linter.lintText(code, { filePath: join(ROOT, file) })
  return (result?.messages ?? []).map((message) => `${message.ruleId}: ${message.message}`)
}

describe('the dependency rule, as the linter enforces it', () => {
  it.each(LAYERS)('is on, as an error, for $file', async ({ file }) => {
    const rules = await layerRulesOf(file)
    for (const rule of LAYER_RULES) {
      const setting = rules[rule]
      // calculateConfigForFile gives severities as numbers: 2 is "error".
      expect([rule, Array.isArray(setting) ? setting[0] : setting]).toEqual([rule, 2])
    }
  })

  it.each(LAYERS)('refuses what $file may not import, in every form', async ({ file, forbidden }) => {
    for (const source of forbidden) {
      for (const code of [
        `import { x } from '${source}'\n`,
        `import type { X } from '${source}'\n`,
        `export * from '${source}'\n`,
      ]) {
        expect(await layerProblems(file, code), code).toEqual([expect.stringMatching(/^no-restricted-imports: /)])
      }
      if (source.startsWith('.')) {
        const dynamic = `export const load = () => import('${source}')\n`
        expect(await layerProblems(file, dynamic), dynamic).toEqual([expect.stringMatching(/^no-restricted-syntax: /)])
      }
    }
  })

  it.each(PROCESS_FILES)('refuses, in %s, imports whose path the linter cannot read', async (file) => {
    const unreadable = [
      'export const load = () => import(`../control-plane/app.js`)\n',
      "export const load = () => import('../control-plane/' + 'app.js')\n",
      'export const load = (name: string) => import(name)\n',
      "export const app: unknown = require('../control-plane/app.js')\n",
      "import { createRequire } from 'node:module'\nexport const app: unknown = createRequire(import.meta.url)('x')\n",
    ]
    for (const code of unreadable) {
      expect(await layerProblems(file, code), code).toEqual([expect.stringMatching(/^no-restricted-syntax: /)])
    }
  })

  it('keeps what keygate verifier loads of cli/ clear of the control plane, but lets commands.ts load it lazily', async () => {
    for (const file of ['cli/keygate.ts', 'cli/commands.ts', 'cli/verifier-command.ts', 'cli/assemble-verifier.ts']) {
      for (const source of ['./control-plane-command.js', './assemble-control-plane.js', '../control-plane/app.js']) {
        const code = `import { x } from '${source}'\n`
        expect(await layerProblems(file, code), `${file}: ${code}`).toEqual([
          expect.stringMatching(/^no-restricted-imports: /),
        ])
      }
      expect(await layerProblems(file, `import { x } from './verifier-command.js'\n`)).toEqual([])
    }
    expect(
      await layerProblems('cli/commands.ts', `export const load = () => import('./control-plane-command.js')\n`),
    ).toEqual([])
  })

  it.each(LAYERS)(
    'lets $file import its own layer, shared/ (but the console) and libraries',
    async ({ file, allowed }) => {
      for (const source of allowed) {
        expect(
          await layerProblems(file, `import { x } from '${source}'\nexport const load = () => import('${source}')\n`),
        ).toEqual([])
      }
    },
  )

  it('leaves the rest of cli/, the composition root, free to import both processes', async () => {
    const code = `import { a } from '../control-plane/app.js'\nimport { b } from '../verifier/app.js'\n`
    expect(await layerProblems('cli/assemble-control-plane.ts', code)).toEqual([])
  })
})
