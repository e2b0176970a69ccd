import { parseArgs } from 'node:util'

export type OptionKind = 'port' | 'host' | 'url' | 'http-url' | 'int' | 'level' | 'secret' | 'string' | 'choice'

export interface OptionSpec {
  /** Flag name without dashes, e.g. `port` for --port. */
  flag: string
  env: string
  kind: OptionKind
  description: string
  default?: string | number
  min?: number
  max?: number
  required?: boolean
  /** For kind `choice`: the accepted values. */
  choices?: string[]
}

export type OptionValues = Record<string, string | number | undefined>

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])

/**
 * Reads every option from flags (which win) or the environment, checks them all and returns every problem
 * at once, so that a bad start-up says everything that is wrong in one go.
 */
export function parseOptions(specs: OptionSpec[], argv: string[], env: NodeJS.ProcessEnv): { values: OptionValues; problems: string[] } {
  const problems: string[] = []
  let flags: Record<string, string | boolean | undefined> = {}
  try {
    flags = parseArgs({
      args: argv,
      options: Object.fromEntries(specs.map((spec) => [spec.flag, { type: 'string' as const }])),
      strict: true,
      allowPositionals: false,
    }).values
  } catch (err) {
    problems.push((err as Error).message)
  }
  const values: OptionValues = {}
  for (const spec of specs) {
    const flagValue = flags[spec.flag]
    const raw = typeof flagValue === 'string' ? flagValue : env[spec.env]
    const source = typeof flagValue === 'string' ? `--${spec.flag}` : spec.env
    if (raw === undefined || raw === '') {
      if (spec.required) problems.push(`${spec.env} (--${spec.flag}) is required: ${spec.description}`)
      values[spec.flag] = spec.default
      continue
    }
    const checked = check(spec, raw)
    if (typeof checked === 'object') problems.push(`${source}: ${checked.problem}`)
    else values[spec.flag] = checked
  }
  return { values, problems }
}

function check(spec: OptionSpec, raw: string): string | number | { problem: string } {
  switch (spec.kind) {
    case 'port':
    case 'int': {
      const min = spec.kind === 'port' ? 0 : spec.min ?? 0
      const max = spec.kind === 'port' ? 65_535 : spec.max ?? Number.MAX_SAFE_INTEGER
      const value = /^\d+$/.test(raw) ? Number(raw) : NaN
      return Number.isSafeInteger(value) && value >= min && value <= max
        ? value
        : { problem: `must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}` }
    }
    case 'url':
      try {
        const url = new URL(raw)
        if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return { problem: 'must be a redis:// or rediss:// URL' }
        return raw
      } catch {
        return { problem: 'must be a URL such as redis://127.0.0.1:6379' }
      }
    case 'http-url':
      try {
        const url = new URL(raw)
        if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: 'must be an http:// or https:// URL' }
        if (url.pathname !== '/' || url.search) return { problem: 'must be an origin such as http://app:3000 (no path): paths pass through as requested' }
        return url.origin
      } catch {
        return { problem: 'must be a URL such as http://127.0.0.1:3000' }
      }
    case 'level':
      return LEVELS.has(raw) ? raw : { problem: `must be one of ${[...LEVELS].join(', ')}` }
    case 'secret':
      return raw.length >= (spec.min ?? 1) ? raw : { problem: `must be at least ${spec.min} characters` }
    case 'choice':
      return spec.choices?.includes(raw) ? raw : { problem: `must be one of ${spec.choices?.join(', ')}` }
    case 'host':
    case 'string':
      return raw
  }
}

/** `--help` text for a command, from the same table the parser reads. */
export function helpText(usage: string, summary: string, specs: OptionSpec[]): string {
  const rows = specs.map((spec) => {
    const fallback = spec.default === undefined ? (spec.required ? 'required' : '') : `default ${spec.default}`
    return `  --${spec.flag.padEnd(22)} ${spec.env.padEnd(26)} ${spec.description}${fallback ? ` (${fallback})` : ''}`
  })
  return `${usage}\n\n${summary}\n\nOptions (flag, environment variable; flags win over the environment):\n${rows.join('\n')}\n  --help${' '.repeat(17)}${' '.repeat(27)}this text\n`
}
