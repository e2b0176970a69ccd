import type { IContainer } from 'kubernetes-models/v1/Container'
import {
  commandOf,
  ConfigError,
  controlPlaneConfig,
  devConfig,
  rootKeyBootstrapConfig,
  rootKeyCreateConfig,
  rootKeyIdConfig,
  rootKeyListConfig,
  specs,
  verifierConfig,
  type CommandName,
} from '../../shared/config/config.js'
import { keygateEnv } from './keygate-env.js'
import { imageName, type PodTemplate } from './pod-templates.js'

/** The image's CMD (Dockerfile): what a keygate container without args runs. */
const DEFAULT_ARGS = ['control-plane']

export function isKeygateContainer(container: IContainer): boolean {
  return imageName(container.image) === 'keygate'
}

/** The keygate command a container runs and the flags after it, or why that cannot be told. */
export function keygateCommand(container: IContainer): { command: CommandName; flags: string[] } | { problem: string } {
  let argv = container.args ?? DEFAULT_ARGS
  if (container.command) {
    // `command` replaces the image's ENTRYPOINT (keygate); only `keygate …` keeps the options checkable.
    if (container.command[0] !== 'keygate')
      return {
        problem: `command ${JSON.stringify(container.command)} does not run keygate: use args with the image's entrypoint`,
      }
    argv = [...container.command.slice(1), ...(container.args ?? [])]
  }
  const found = commandOf(argv)
  if (!found) return { problem: `runs unknown keygate command ${JSON.stringify(argv.join(' '))}` }
  return { command: found.command, flags: found.rest }
}

/**
 * The port a verifier container serves its own endpoints on (verifyKey, /v1/authorize, /metrics): --port,
 * else a literal PORT, else Keygate's default. Undefined for a container that runs no verifier.
 */
export function verifierPort(container: IContainer): number | undefined {
  const resolved = keygateCommand(container)
  if ('problem' in resolved || resolved.command !== 'verifier') return undefined
  const { flags } = resolved
  const at = flags.findIndex((flag) => flag === '--port' || flag.startsWith('--port='))
  const raw =
    at === -1
      ? container.env?.find((variable) => variable.name === 'PORT')?.value
      : flags[at]!.includes('=')
        ? flags[at]!.slice('--port='.length)
        : flags[at + 1]
  const fallback = specs.verifier.find((spec) => spec.env === 'PORT')!.default
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : Number(fallback)
}

const parsers = {
  'control-plane': controlPlaneConfig,
  verifier: verifierConfig,
  dev: devConfig,
  'root-key create': rootKeyCreateConfig,
  'root-key list': rootKeyListConfig,
  'root-key revoke': (argv, env) => rootKeyIdConfig('root-key revoke', argv, env),
  'root-key roll': (argv, env) => rootKeyIdConfig('root-key roll', argv, env),
  'root-key bootstrap disable': (argv, env) => rootKeyBootstrapConfig('root-key bootstrap disable', argv, env),
  'root-key bootstrap enable': (argv, env) => rootKeyBootstrapConfig('root-key bootstrap enable', argv, env),
} satisfies Record<CommandName, (argv: string[], env: NodeJS.ProcessEnv) => unknown>

/**
 * A keygate container's configuration, checked by Keygate's own option table and parser
 * (shared/config/config.ts): every variable must be an option of the command it runs (or a part another
 * variable splices in), flags and literal values must parse, and the pod must give the process time to
 * finish its shutdown before the kubelet kills it.
 */
export function checkKeygateContainer(container: IContainer, pod: PodTemplate): string[] {
  const resolved = keygateCommand(container)
  if ('problem' in resolved) return [resolved.problem]
  const { command, flags } = resolved
  const { env, unknown, problems } = keygateEnv(container, command)
  let config: unknown
  try {
    config = parsers[command](flags, env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    // A value read from a Secret or ConfigMap is unknown here: its absence is no problem.
    problems.push(...err.problems.filter((problem) => ![...unknown].some((name) => problem.startsWith(name))))
  }
  const shutdown = config as { shutdownDelayMs?: number; shutdownGraceMs?: number } | undefined
  if (shutdown?.shutdownDelayMs !== undefined && shutdown.shutdownGraceMs !== undefined) {
    const needed = (shutdown.shutdownDelayMs + shutdown.shutdownGraceMs) / 1000
    const allowed = pod.spec.terminationGracePeriodSeconds ?? 30
    if (needed > allowed) {
      problems.push(
        `SHUTDOWN_DELAY_MS + SHUTDOWN_GRACE_MS is ${needed} s, over the pod's terminationGracePeriodSeconds (${allowed} s): the kubelet would kill it mid-drain`,
      )
    }
  }
  return problems
}
