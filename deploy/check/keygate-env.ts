import type { IContainer } from 'kubernetes-models/v1/Container'
import { closestName } from '../../shared/closest-name.js'
import { specs, type CommandName } from '../../shared/config/config.js'
import { expand, referenceOrderProblems, referencesIn, type EnvValue } from './env-references.js'

/** Read by Node itself, not by Keygate: allowed beside Keygate's own options. */
const NODE_VARIABLES = new Set(['NODE_OPTIONS'])

// Stands for a value from a Secret inside a URL: digits fit wherever a reference can sit in one (a
// password, a host, a port, a db), so the rest of the URL is still parsed.
const URL_PLACEHOLDER = '0'
const URL_KINDS = new Set(['url', 'http-url'])
// A URL held by an option of another kind (CLICKHOUSE_URL is a string its command checks).
const URL_TEXT = /^[a-z][a-z0-9+.-]*:\/\//i

/** Whether a value built around a Secret's is still worth parsing: a URL, with the stand-in in the Secret's place. */
const parsesWithStandIn = (kind: string | undefined, text: string) => URL_KINDS.has(kind ?? '') || URL_TEXT.test(text)

export interface KeygateEnv {
  /** The literal values, expanded as the kubelet will, for Keygate's parser. */
  env: NodeJS.ProcessEnv
  /** Options whose value is unknown here (a Secret, a ConfigMap): the parser's word on them does not count. */
  unknown: Set<string>
  problems: string[]
}

/**
 * A keygate container's environment as its process will see it. Every variable must be an option of the
 * command it runs, except one that a later option uses as `$(NAME)` (a password from a Secret spliced into
 * REDIS_URL) and that is not a near-miss of an option's name; references must name a variable listed earlier,
 * or Kubernetes leaves them as text.
 */
export function keygateEnv(container: IContainer, command: CommandName): KeygateEnv {
  const kinds = new Map<string, string>(specs[command].map((spec) => [spec.env, spec.kind]))
  const variables = container.env ?? []
  const result: KeygateEnv = { env: {}, unknown: new Set(), problems: [] }
  const add = (message: string) => result.problems.push(message)
  if (container.envFrom?.length)
    add('envFrom hides which variables are set: list each under env (valueFrom for secrets)')
  // Only a later Keygate option can make a helper variable mean something: one referenced by another helper
  // (or by nothing) is a mistake, and so is a name within two edits of an option (a typo, whoever refers to it).
  const feedsAnOption = (name: string, at: number) =>
    variables.some((other, i) => i > at && kinds.has(other.name) && referencesIn(other.value ?? '').includes(name))
  for (const message of referenceOrderProblems(variables)) add(message)
  const defined = new Map<string, EnvValue>()
  for (const [at, variable] of variables.entries()) {
    const { name } = variable
    if (defined.has(name)) add(`env ${name} is listed twice`)
    const kind = kinds.get(name)
    const value: EnvValue = variable.valueFrom
      ? { text: '', unknown: true }
      : expand(variable.value ?? '', defined, URL_PLACEHOLDER)
    defined.set(name, value)
    if (kind === undefined && !NODE_VARIABLES.has(name)) {
      const hint = hintFor(name, kinds.keys())
      if (hint || !feedsAnOption(name, at)) add(`env ${name} is not an option of keygate ${command}${hint}`)
    } else if (variable.valueFrom || (value.unknown && !parsesWithStandIn(kind, value.text))) {
      result.unknown.add(name)
    } else {
      result.env[name] = value.text
    }
  }
  return result
}

function hintFor(name: string, known: Iterable<string>): string {
  const hint = closestName(name, known)
  return hint ? ` (did you mean ${hint}?)` : ''
}
