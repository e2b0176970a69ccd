import type { IContainer } from 'kubernetes-models/v1/Container'
import {
  ConfigError, controlPlaneConfig, devConfig, rootKeyCreateConfig, specs, verifierConfig, type CommandName,
} from '../../shared/config/config.js'
import { imageName, type PodTemplate } from './pod-templates.js'

/** The image's CMD (Dockerfile): what a keygate container without args runs. */
const DEFAULT_ARGS = ['control-plane']

/** Read by Node itself, not by Keygate: allowed beside Keygate's own options. */
const NODE_VARIABLES = new Set(['NODE_OPTIONS'])

export function isKeygateContainer(container: IContainer): boolean {
  return imageName(container.image) === 'keygate'
}

/** The keygate command a container runs and the flags after it, or why that cannot be told. */
export function keygateCommand(container: IContainer): { command: CommandName; flags: string[] } | { problem: string } {
  let argv = container.args ?? DEFAULT_ARGS
  if (container.command) {
    // `command` replaces the image's ENTRYPOINT (keygate); only `keygate …` keeps the options checkable.
    if (container.command[0] !== 'keygate') return { problem: `command ${JSON.stringify(container.command)} does not run keygate: use args with the image's entrypoint` }
    argv = [...container.command.slice(1), ...(container.args ?? [])]
  }
  const [first, second] = argv
  const named = first === 'root-key' && second === 'create' ? 'root-key create' : first
  if (named === undefined || !Object.hasOwn(specs, named)) return { problem: `runs unknown keygate command ${JSON.stringify(argv.join(' '))}` }
  return { command: named as CommandName, flags: argv.slice(named === 'root-key create' ? 2 : 1) }
}

const parsers = {
  'control-plane': controlPlaneConfig, verifier: verifierConfig, dev: devConfig, 'root-key create': rootKeyCreateConfig,
} satisfies Record<CommandName, (argv: string[], env: NodeJS.ProcessEnv) => unknown>

/**
 * A keygate container's configuration, checked by Keygate's own option table and parser
 * (shared/config/config.ts): every variable must be an option of the command it runs, flags and literal values
 * must parse, and the pod must give the process time to finish its shutdown before the kubelet kills it.
 */
export function checkKeygateContainer(container: IContainer, pod: PodTemplate): string[] {
  const resolved = keygateCommand(container)
  if ('problem' in resolved) return [resolved.problem]
  const { command, flags } = resolved
  const known = new Set<string>(specs[command].map((spec) => spec.env))
  const problems: string[] = []
  if (container.envFrom?.length) problems.push('envFrom hides which variables are set: list each under env (valueFrom for secrets)')
  const env: NodeJS.ProcessEnv = {}
  const fromReferences = new Set<string>()
  const seen = new Set<string>()
  for (const variable of container.env ?? []) {
    if (seen.has(variable.name)) problems.push(`env ${variable.name} is listed twice`)
    seen.add(variable.name)
    if (!known.has(variable.name) && !NODE_VARIABLES.has(variable.name)) {
      const hint = closest(variable.name, known)
      problems.push(`env ${variable.name} is not an option of keygate ${command}${hint ? ` (did you mean ${hint}?)` : ''}`)
    } else if (variable.valueFrom) fromReferences.add(variable.name)
    else env[variable.name] = variable.value ?? ''
  }
  let config: unknown
  try {
    config = parsers[command](flags, env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    // A value read from a Secret or ConfigMap is unknown here: its absence is no problem.
    problems.push(...err.problems.filter((problem) => ![...fromReferences].some((name) => problem.startsWith(name))))
  }
  const shutdown = config as { shutdownDelayMs?: number; shutdownGraceMs?: number } | undefined
  if (shutdown?.shutdownDelayMs !== undefined && shutdown.shutdownGraceMs !== undefined) {
    const needed = (shutdown.shutdownDelayMs + shutdown.shutdownGraceMs) / 1000
    const allowed = pod.spec.terminationGracePeriodSeconds ?? 30
    if (needed > allowed) {
      problems.push(`SHUTDOWN_DELAY_MS + SHUTDOWN_GRACE_MS is ${needed} s, over the pod's terminationGracePeriodSeconds (${allowed} s): the kubelet would kill it mid-drain`)
    }
  }
  return problems
}

/** The known name within two edits of `name`, for a "did you mean". */
function closest(name: string, known: Iterable<string>): string | undefined {
  let best: { name: string; distance: number } | undefined
  for (const candidate of known) {
    const distance = editDistance(name, candidate)
    if (distance <= 2 && (!best || distance < best.distance)) best = { name: candidate, distance }
  }
  return best?.name
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}
