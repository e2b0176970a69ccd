import { parseArgs } from 'node:util'
import { closestName } from '../closest-name.js'

export type OptionKind =
  'port' | 'host' | 'url' | 'http-url' | 'link-base' | 'int' | 'level' | 'secret' | 'string' | 'choice' | 'boolean'

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

interface OptionBase {
  /** Flag name without dashes, e.g. `port` for --port. */
  flag: string
  env: string
  description: string
  required?: boolean
}

/** One row of the option table: what the flag and variable are called, what they accept, and the default. */
export type OptionSpec =
  | (OptionBase & { kind: 'port' | 'int'; default?: number; min?: number; max?: number })
  | (OptionBase & { kind: 'choice'; choices: readonly string[]; default?: string })
  | (OptionBase & { kind: 'secret'; min: number })
  | (OptionBase & { kind: 'level'; default?: LogLevel })
  /** A switch: the bare flag (`--json`) turns it on, `--no-json` off; its variable takes true/false (or 1/0). */
  | (OptionBase & { kind: 'boolean'; default?: boolean })
  | (OptionBase & { kind: 'host' | 'url' | 'http-url' | 'link-base' | 'string'; default?: string })

/** A choice's default must be one of its choices (a level's is a LogLevel by its type above). */
type DefaultChosen<S extends OptionSpec> = S extends { kind: 'choice'; choices: readonly (infer C)[] }
  ? { default?: C }
  : unknown

/** A row kept with its literal types (flag name, kind, choices, default), so values can be typed from it. */
export const option = <const S extends OptionSpec>(spec: S & DefaultChosen<S>): S => spec

/** The type a row's value has once parsed. */
type ValueOf<S extends OptionSpec> = S extends { kind: 'port' | 'int' }
  ? number
  : S extends { kind: 'choice'; choices: readonly (infer C)[] }
    ? C
    : S extends { kind: 'level' }
      ? LogLevel
      : S extends { kind: 'boolean' }
        ? boolean
        : string

/** A row with a default or marked required always has a value after a successful parse. */
type Always<S extends OptionSpec> = S extends { default: string | number | boolean } | { required: true } ? true : false

/** The parsed values of a table of rows, keyed by flag name, typed from the rows themselves. */
export type OptionValues<Specs extends readonly OptionSpec[]> = {
  [S in Specs[number] as S['flag']]: Always<S> extends true ? ValueOf<S> : ValueOf<S> | undefined
}

const LEVELS = new Set<string>(LOG_LEVELS)

export interface ParsedOptions<Specs extends readonly OptionSpec[]> {
  /** Every value that was given and valid, or defaulted: what cross-option rules may look at. */
  read: Partial<OptionValues<Specs>>
  /** Everything wrong, each naming its flag or variable. */
  problems: string[]
  /** All the values, when there is no problem. */
  values: OptionValues<Specs> | undefined
  /** The command's arguments (beside its options), one per name asked for, when they were all given. */
  args: string[]
}

/**
 * Reads every option from flags (which win) or the environment, checks them all and returns every problem
 * at once, so that a bad start-up says everything that is wrong in one go. `argNames` names the arguments the
 * command takes beside its options (`<rootKeyId>`), in order; each is required, and no other is taken.
 */
export function parseOptions<const Specs extends readonly OptionSpec[]>(
  specs: Specs,
  argv: string[],
  env: NodeJS.ProcessEnv,
  argNames: readonly string[] = [],
): ParsedOptions<Specs> {
  const problems: string[] = []
  let flags: Record<string, string | boolean | undefined> = {}
  let args: string[] = []
  try {
    const parsed = parseArgs({
      args: argv,
      options: Object.fromEntries(
        specs.map((spec) => [
          spec.flag,
          { type: spec.kind === 'boolean' ? ('boolean' as const) : ('string' as const) },
        ]),
      ),
      strict: true,
      allowPositionals: true,
      // `--no-<flag>` turns a switch off: a switch on by default (WEBHOOK_ALLOW_PRIVATE in dev) can be turned off by
      // its flag, as flags win over the environment.
      allowNegative: true,
    })
    flags = parsed.values
    args = parsed.positionals
    for (const name of argNames.slice(args.length)) problems.push(`<${name}> is required`)
    for (const extra of args.slice(argNames.length)) problems.push(`unexpected argument ${JSON.stringify(extra)}`)
  } catch (err) {
    problems.push(parseProblem(err as Error & { code?: string }, specs))
  }
  const values: Record<string, string | number | boolean | undefined> = {}
  for (const spec of specs) {
    const flagValue = flags[spec.flag]
    if (typeof flagValue === 'boolean') {
      values[spec.flag] = flagValue
      continue
    }
    const raw = typeof flagValue === 'string' ? flagValue : env[spec.env]
    const source = typeof flagValue === 'string' ? `--${spec.flag}` : spec.env
    if (raw === undefined || raw === '') {
      if (spec.required) problems.push(`${spec.env} (--${spec.flag}) is required: ${spec.description}`)
      values[spec.flag] = defaultOf(spec)
      continue
    }
    const checked = check(spec, raw)
    if (typeof checked === 'object') problems.push(`${source}: ${checked.problem}`)
    else values[spec.flag] = checked
  }
  // Each value present was checked against its row above (check()), which is what OptionValues says of it; a
  // row that failed is absent, and only without problems is every required row (and defaulted one) there.
  return {
    read: values as Partial<OptionValues<Specs>>,
    problems,
    values: problems.length === 0 ? (values as OptionValues<Specs>) : undefined,
    args: problems.length === 0 ? args : [],
  }
}

/**
 * node:util's refusal of the command line, in the table's terms: an unknown flag names the closest known one, and a
 * switch given a value says how to turn it on and off.
 */
function parseProblem(err: Error & { code?: string }, specs: readonly OptionSpec[]): string {
  const valued =
    err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' ? /'--([^']+)' does not take/.exec(err.message) : null
  if (valued?.[1] !== undefined) {
    return `--${valued[1]} takes no value: --${valued[1]} turns it on, --no-${valued[1]} turns it off`
  }
  const unknown = err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'(-[^'=]*)/.exec(err.message)?.[1] : undefined
  if (unknown === undefined) return err.message
  const closest = closestName(
    unknown.replace(/^-+/, ''),
    specs.map((spec) => spec.flag),
  )
  return `unknown option ${unknown}${closest ? ` (did you mean --${closest}?)` : ''}: --help lists the options`
}

/** A secret has no default: it is given, or absent. */
export const defaultOf = (spec: OptionSpec): string | number | boolean | undefined =>
  'default' in spec ? spec.default : undefined

function check(spec: OptionSpec, raw: string): string | number | boolean | { problem: string } {
  switch (spec.kind) {
    case 'boolean':
      return raw === 'true' || raw === '1'
        ? true
        : raw === 'false' || raw === '0'
          ? false
          : { problem: 'must be true or false (or 1 or 0)' }
    case 'port':
    case 'int': {
      const min = spec.kind === 'port' ? 0 : (spec.min ?? 0)
      const max = spec.kind === 'port' ? 65_535 : (spec.max ?? Number.MAX_SAFE_INTEGER)
      const value = /^\d+$/.test(raw) ? Number(raw) : NaN
      return Number.isSafeInteger(value) && value >= min && value <= max
        ? value
        : { problem: `must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}` }
    }
    case 'url':
      try {
        const url = new URL(raw)
        if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
          return { problem: 'must be a redis:// or rediss:// URL' }
        return raw
      } catch {
        return { problem: 'must be a URL such as redis://127.0.0.1:6379' }
      }
    case 'http-url':
      try {
        const url = new URL(raw)
        if (url.protocol !== 'http:' && url.protocol !== 'https:')
          return { problem: 'must be an http:// or https:// URL' }
        if (url.pathname !== '/' || url.search)
          return { problem: 'must be an origin such as http://app:3000 (no path): paths pass through as requested' }
        return url.origin
      } catch {
        return { problem: 'must be a URL such as http://127.0.0.1:3000' }
      }
    case 'link-base':
      // A path from the root is a link relative to whichever server answered; else an absolute http(s) URL.
      if (/^\/(?!\/)[^?#\s]*$/.test(raw)) return raw
      try {
        const url = new URL(raw)
        if ((url.protocol === 'http:' || url.protocol === 'https:') && !url.search && !url.hash) return raw
      } catch {
        // not a URL: the problem below
      }
      return { problem: 'must be a path such as /docs or an http(s) URL such as https://keygate.example.com/docs' }
    case 'level':
      return LEVELS.has(raw) ? raw : { problem: `must be one of ${[...LEVELS].join(', ')}` }
    case 'secret':
      return raw.length >= spec.min ? raw : { problem: `must be at least ${spec.min} characters` }
    case 'choice':
      return spec.choices.includes(raw) ? raw : { problem: `must be one of ${spec.choices.join(', ')}` }
    case 'host':
    case 'string':
      return raw
  }
}

/** `--help` text for a command, from the same table the parser reads. */
export function helpText(usage: string, summary: string, specs: readonly OptionSpec[]): string {
  const rows = specs.map((spec) => {
    const fallback = defaultOf(spec) === undefined ? (spec.required ? 'required' : '') : `default ${defaultOf(spec)}`
    return `  --${spec.flag.padEnd(22)} ${spec.env.padEnd(26)} ${spec.description}${fallback ? ` (${fallback})` : ''}`
  })
  const own = (flag: string, text: string) => `  ${flag.padEnd(24)} ${' '.repeat(26)} ${text}`
  const switches = specs.some((spec) => spec.kind === 'boolean') ? '; --no-<flag> turns a switch off' : ''
  return `${usage}\n\n${summary}\n\nOptions (flag, environment variable; flags win over the environment${switches}):\n${[...rows, own('-h, --help', 'this text'), own('--version', "keygate's version")].join('\n')}\n`
}
