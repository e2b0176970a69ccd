import type { CommandName } from '../shared/config/config.js'
import { SERVERS } from './commands.js'

/**
 * Keygate's servers run without Node's AsyncContextFrame. Node 24 turned it on by default, and from the first timer
 * a process clears (Fastify's boot clears one) every `process.nextTick` reads the current frame into its tick object
 * and every tick run swaps it in and out again: calls into C++ on each of the ~6 ticks node:http makes per request,
 * and generic property loads in the tick queue's compiled code. Nothing keygate runs uses AsyncLocalStorage, so a
 * server (not the one-shot root-key commands) relaunches itself with `--no-async-context-frame` at start-up, in the
 * same process (execve keeps its pid and its stdin, stdout and stderr). Counted by callgrind, the frame cost the
 * verifier's main thread 0–6 % more instructions per verifyKey, depending on the process (bench/RESULTS.md).
 *
 * It is left as it is when a relaunch would lose something: a frame flag the operator gave, in any spelling, on the
 * command line or in NODE_OPTIONS (their choice); an IPC channel (execve keeps only fds 0–2: a parent that talks to
 * it — PM2's fork mode, `node --watch` — would lose it); an inspector flag (a debugger attached to the first image
 * would be dropped). Node before 24 has the frame off by default, and nothing is done there. What the relaunch does
 * repeat: preloads (`--require`, `--import`) run again in the new image.
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
  /** Whether the process has an IPC channel to its parent (`process.channel`). */
  hasIpcChannel: boolean
}

/** A frame flag as Node reads it: dashes or underscores, negated or not, with or without a value. */
const FRAME_FLAG = /^--(no[-_])?async[-_]context[-_]frame(=.*)?$/
/** An inspector flag, in any spelling (`--inspect-port` alone opens nothing: skipping for it costs only speed). */
const INSPECTOR_FLAG = /^--inspect([-_](brk|wait|port)([-_]node)?)?(=.*)?$/

/** NODE_OPTIONS' words, with the quotes Node allows around one taken off. */
function optionsOf(nodeOptions: string | undefined): string[] {
  return (nodeOptions ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => word.replace(/^["']|["']$/g, ''))
}

/** The arguments to relaunch `command` with (after the node binary), or undefined when it runs as it is. */
export function relaunchWithoutAsyncContextFrame(command: CommandName, node: NodeProcess): string[] | undefined {
  if (!SERVERS.has(command) || !node.canExecve || node.hasIpcChannel) return undefined
  if (Number(node.version.split('.')[0]) < 24) return undefined
  const given = [...node.execArgv, ...optionsOf(node.nodeOptions)]
  if (given.some((flag) => FRAME_FLAG.test(flag) || INSPECTOR_FLAG.test(flag))) return undefined
  return [...node.execArgv, FLAG, ...node.argv.slice(1)]
}
