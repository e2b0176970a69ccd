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
/** The rule that holds each control-plane domain to the domains DOMAIN_IMPORTS (eslint.config.js) lists for it. */
const DOMAIN_RULE = 'keygate/domain-imports'

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
      '../shared/store/api-keys/memory-api-key-store.js',
      '../shared/store/redis/redis-connection.js',
      '../shared/store/backend.js',
      'chdb',
      '@clickhouse/client',
    ],
    allowed: [
      '../shared/store/verifier-store.js',
      '../shared/store/store.js',
      '../shared/store/counters/counter-store.js',
      './key-cache.js',
      'fastify',
      'undici',
    ],
  },
  {
    file: 'control-plane/http/probe.ts',
    forbidden: [
      '../../verifier/key-verifier.js',
      '../../cli/assemble-control-plane.js',
      '../../shared/store/entities/redis-entity-store.js',
      '../../shared/store/backend.js',
      '../analytics/engine/chdb-engine.js',
    ],
    allowed: [
      '../../shared/errors/errors.js',
      '../keys/key-writes.js',
      '../analytics/engine/analytics-engine.js',
      '../../shared/store/store.js',
      '@fastify/swagger',
    ],
  },
  {
    // A domain's operations and rules know no wire format: HTTP, schemas' library, adapters, the domain's wire/
    // folder and the reference are its adapters'.
    file: 'control-plane/keys/probe.ts',
    forbidden: [
      'fastify',
      'typebox',
      '@fastify/swagger',
      '../../shared/http/v2-route.js',
      '../openapi/operations.js',
      './wire/key-data.v2.js',
      './wire/key-schemas.js',
      '../wire/fields.js',
      '../http/management-route.js',
      '../../verifier/key-verifier.js',
      '../../shared/store/memory-store.js',
      '../analytics/engine/chdb-engine.js',
    ],
    allowed: ['../../shared/errors/errors.js', '../caller.js', '../root-keys/root-key-auth.js', './get-key.js'],
  },
  {
    // The same in a domain's subfolders.
    file: 'control-plane/webhooks/events/probe.ts',
    forbidden: ['fastify', 'typebox', '../wire/webhook-schemas.js', '../../http/management-route.js'],
    allowed: ['../../../shared/errors/errors.js', './event-deriver.js', '../endpoints/endpoint-wants.js'],
  },
  {
    // Its adapters are where the wire formats live.
    file: 'control-plane/keys/probe.v2.ts',
    forbidden: ['../../verifier/key-verifier.js', '../../shared/store/redis-store.js'],
    allowed: ['typebox', '../http/management-route.js', './wire/key-data.v2.js', './get-key.js'],
  },
  {
    file: 'shared/http/probe.ts',
    forbidden: [
      '../../verifier/app.js',
      '../../control-plane/app.js',
      '../../cli/keygate.js',
      '@fastify/swagger-ui',
      'chdb',
      '@clickhouse/client/dist/index.js',
    ],
    allowed: ['../store/verifier-store.js', './error-body.js', 'fastify'],
  },
  {
    // The browser's code: a client of the wire API, like any other.
    file: 'console/src/probe.ts',
    forbidden: [
      '../../shared/errors/errors.js',
      '../../control-plane/app.js',
      '../../verifier/app.js',
      '../../cli/keygate.js',
    ],
    allowed: ['./api.js', './ui/page.js', 'preact', 'preact/hooks', 'uplot'],
  },
  {
    // The console's ui/, which the portal shares: of the console only ui/ itself, formats and the generated shapes,
    // never its API client (which holds a root key), its session or its pages.
    file: 'console/src/ui/probe.ts',
    forbidden: ['../api.js', '../session.js', '../types.js', '../pages/keys.js', '../../../portal/src/portal-api.js'],
    allowed: [
      './page.js',
      '../format.js',
      '../generated/ui-shapes.js',
      '../generated/console-answers.js',
      'preact',
      'preact/hooks',
      'uplot',
    ],
  },
  {
    // The customer portal's page: a client of the wire API, sharing only the console's ui/ and formats.
    file: 'portal/src/probe.ts',
    forbidden: [
      '../../shared/errors/errors.js',
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

/** The layer rules the project's configuration applies to `file`, and the plugin its domain rule comes from. */
async function layerConfigOf(file: string): Promise<Linter.Config> {
  const config = (await new ESLint({ cwd: ROOT }).calculateConfigForFile(join(ROOT, file))) as Linter.Config
  const rules = Object.fromEntries(
    [...LAYER_RULES, DOMAIN_RULE].flatMap((rule) => (config.rules?.[rule] ? [[rule, config.rules[rule]]] : [])),
  )
  const keygate = config.plugins?.['keygate']
  return { rules, ...(keygate ? { plugins: { keygate } } : {}) }
}

/** The layer rules alone, each with its severity. */
async function layerRulesOf(file: string): Promise<Partial<Linter.RulesRecord>> {
  return (await layerConfigOf(file)).rules ?? {}
}

/** Lints `code` as if it were `file`, with only the layer rules (no type information needed). */
async function layerProblems(file: string, code: string): Promise<string[]> {
  const linter = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [
      { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, ...(await layerConfigOf(file)) },
    ],
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

interface DomainCase {
  /** A file of a domain (need not exist). */
  file: string
  /** What DOMAIN_IMPORTS says the domain may import, as the refusal names it. */
  may: string
  /** Imports of domains the table does not list for it, and the domain each names. */
  forbidden: [source: string, domain: string][]
  allowed: string[]
}

/** A few domains of DOMAIN_IMPORTS (eslint.config.js), read by the rule from the importing file's place. */
const DOMAIN_CASES: DomainCase[] = [
  {
    // An operation's folder: webhooks may import analytics, keys and root-keys; shared/'s portal/ and ratelimits/ are
    // no domain.
    file: 'control-plane/webhooks/probe.ts',
    may: 'analytics, keys, root-keys',
    forbidden: [
      ['../identities/identity-binding.js', 'identities'],
      ['../portal/portal-record.js', 'portal'],
      ['../../control-plane/audit/audit-log.js', 'audit'],
    ],
    allowed: [
      '../keys/keys-in-scope.js',
      '../root-keys/root-key-auth.js',
      '../analytics/usage-sum.js',
      './webhook-policy.js',
      '../caller.js',
      '../../shared/portal/portal.js',
      '../../shared/ratelimits/ratelimit.js',
    ],
  },
  {
    // A domain's subfolder: the same domain, one level further down.
    file: 'control-plane/webhooks/events/probe.ts',
    may: 'analytics, keys, root-keys',
    forbidden: [['../../ratelimits/limit.js', 'ratelimits']],
    allowed: [
      '../../keys/keys-in-scope.js',
      '../endpoints/endpoint-wants.js',
      '../../../shared/ratelimits/ratelimit.js',
    ],
  },
  {
    // An adapter is the domain's as much as its operation is.
    file: 'control-plane/identities/probe.v1.ts',
    may: 'analytics, keys, root-keys',
    forbidden: [['../webhooks/webhook-policy.js', 'webhooks']],
    allowed: [
      '../keys/wire/key-schemas.js',
      '../analytics/wire/usage-threshold-schemas.js',
      './wire/identity-schemas.js',
      '../http/management-route.js',
    ],
  },
  {
    // audit, at the bottom of the domains, imports none: the keys' view of a record is given to it.
    file: 'control-plane/audit/probe.ts',
    may: 'no other domain',
    forbidden: [
      ['../root-keys/root-key-auth.js', 'root-keys'],
      ['../keys/key-response.js', 'keys'],
    ],
    allowed: ['./audit-log.js', '../caller.js', '../../shared/keys/records.js'],
  },
]

describe("the domains' imports, as the linter enforces them (DOMAIN_IMPORTS)", () => {
  it.each(DOMAIN_CASES)('is on, as an error, for $file', async ({ file }) => {
    const setting = (await layerRulesOf(file))[DOMAIN_RULE]
    expect(Array.isArray(setting) ? setting[0] : setting).toBe(2)
  })

  it.each(DOMAIN_CASES)('refuses, in $file, a domain the table does not list, in every form', async (domainCase) => {
    for (const [source, domain] of domainCase.forbidden) {
      const refusal = `${DOMAIN_RULE}: the ${domainCase.file.split('/')[1]} domain may import ${domainCase.may}, not ${domain}/`
      for (const code of [
        `import { x } from '${source}'\n`,
        `import type { X } from '${source}'\n`,
        `export * from '${source}'\n`,
        `export { x } from '${source}'\n`,
        `export const load = () => import('${source}')\n`,
        `export type X = typeof import('${source}')\n`,
      ])
        expect(await layerProblems(domainCase.file, code), code).toEqual([expect.stringContaining(refusal)])
    }
  })

  it.each(DOMAIN_CASES)(
    'lets $file import the domains the table lists, its own and the rest',
    async ({ file, allowed }) => {
      for (const source of allowed)
        expect(
          await layerProblems(file, `import { x } from '${source}'\nexport const load = () => import('${source}')\n`),
          source,
        ).toEqual([])
    },
  )

  it('leaves the control plane outside its domains to the layer rules', async () => {
    const code = "import { a } from './keys/routes.js'\nimport { b } from './portal/routes.js'\n"
    expect(await layerProblems('control-plane/management-routes.ts', code)).toEqual([])
    expect((await layerRulesOf('control-plane/http/probe.ts'))[DOMAIN_RULE]).toBeUndefined()
  })
})
