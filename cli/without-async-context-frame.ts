import type { CommandName } from '../shared/config/config.js'
import { SERVERS } from './commands.js'

/**
 * Keygate's servers run without Node's AsyncContextFrame. Node 24 turned it on by default, and from the first timer
 * a process clears (Fastify's boot clears one) every `process.nextTick` reads the current frame into its tick object
 * and every tick run swaps it in and out again: calls into C++ on each of the ~6 ticks node:http makes per request,
 * and generic property loads in the tick queue's compiled code. Nothing keygate runs uses AsyncLocalStorage, so a
 * server (not the one-shot root-key commands) relaunches itself with `--no-async-context-frame`, in the same process
 * (execve keeps its pid, so signals, supervisors and containers see no difference). Counted by callgrind, the frame
 * cost the verifier's main thread 0–6 % more instructions per verifyKey, depending on the process (bench/RESULTS.md).
 * A frame flag given either way (`--async-context-frame` or `--no-…`, on the command line or in NODE_OPTIONS) is the
 * operator's choice and is left alone; Node before 24 has the frame off by default, and nothing is done there.
 */
const FLAG = '--no-async-context-frame'

export interface NodeProcess {
  /** `process.versions.node`. */
  version: string
  execArgv: readonly string[]
  /** `process.argv`: node, the script, then the command's own arguments. */
  argv: readonly string[]
  nodeOptions: string | undefined
  /** Whether this Node can replace its process image (`process.execve`, Node 22.15 / 23.11 on). */
  canExecve: boolean
}

/** The arguments to relaunch `command` with (after the node binary), or undefined when it runs as it is. */
export function relaunchWithoutAsyncContextFrame(command: CommandName, node: NodeProcess): string[] | undefined {
  if (!SERVERS.has(command) || !node.canExecve) return undefined
  if (Number(node.version.split('.')[0]) < 24) return undefined
  const given = [...node.execArgv, ...(node.nodeOptions ?? '').split(/\s+/)]
  if (given.some((flag) => /^--(no-)?(experimental-)?async-context-frame$/.test(flag))) return undefined
  return [...node.execArgv, FLAG, ...node.argv.slice(1)]
}
