import type { CommandName } from '../shared/config/config.js'
import { PRETENURING_ON } from './allocation-site-pretenuring.js'
import { SERVERS } from './commands.js'

/**
 * Keygate's servers run with node flags that only take effect when the process starts, so a server started without
 * them relaunches itself with them at start-up, in the same process (execve keeps its pid and its stdin, stdout and
 * stderr). Each is added only when the operator gave no flag of its kind, in any spelling, on the command line or in
 * NODE_OPTIONS (their choice wins):
 *
 * - `--no-async-context-frame` (Node 24 on). Node 24 has the frame on by default, and from the first timer a process
 *   clears (Fastify's boot clears one) every `process.nextTick` reads the current frame into its tick object and every
 *   tick run swaps it in and out again: calls into C++ on each of the ~6 ticks node:http makes per request, and
 *   generic property loads in the tick queue's compiled code, all for nothing: nothing keygate runs uses
 *   AsyncLocalStorage. Node before 24 has it off by default.
 * - `--max-semi-space-size=8`: V8's young generation held at 8 MB a semi-space. Node 24's V8 lets it grow to 64 MB a
 *   semi-space (Node 20's to 16) under load, and a scavenge then sweeps every request body node's HTTP parser made
 *   since the last one in one long pause, which holds up the requests in flight; at 8 MB scavenges come often and
 *   short, as a bare Fastify route's do, for no more CPU per request. V8 sizes the heap when the process starts:
 *   `v8.setFlagsFromString` afterwards does not move it, hence the relaunch. The flag sets the size rather than
 *   capping V8's own, which is smaller where V8 gives a process a small heap (little memory): so it is added only when
 *   V8 gave this one a heap of at least 1 GiB. Not added either when the operator sized the heap (`--max-heap-size`:
 *   V8 refuses it together with both space sizes) or kept allocation-site pretenuring on
 *   (allocation-site-pretenuring.ts): with it on, a small young generation makes V8 pretenure per-request literals,
 *   and scavenges then promote what they point to.
 *
 * It is left as it is when a relaunch would lose something: an IPC channel (execve keeps only fds 0–2: a parent that
 * talks to it — PM2's fork mode, `node --watch` — would lose it); an inspector flag (a debugger attached to the first
 * image would be dropped); a Node without `process.execve` (before 22.15 / 23.11). What the relaunch does repeat:
 * preloads (`--require`, `--import`) run again in the new image.
 */
interface ServerFlag {
  flag: string
  /** The least heap V8 must have given the process for the flag to be added (bytes; 0: any). */
  minHeapBytes?: number
  /** Flags the operator might give that decide what this one would: given any, it is not added. */
  given: RegExp[]
  /** The first major version of Node that needs it. */
  since: number
}

/** A frame flag as Node reads it: dashes or underscores, negated or not, with or without a value. */
const FRAME_FLAG = /^--(no[-_])?async[-_]context[-_]frame(=.*)?$/
/** A semi-space size, least or most, or the heap's whole size, in any spelling V8 takes (one dash or two). */
const HEAP_SIZE_FLAG = /^--?(min[-_]semi[-_]space|max[-_]semi[-_]space|max[-_]heap)[-_]size(=.*)?$/

export const SERVER_FLAGS: readonly ServerFlag[] = [
  { flag: '--no-async-context-frame', given: [FRAME_FLAG], since: 24 },
  // Not with pretenuring asked for (node takes that flag only on its command line): the two cascade together.
  { flag: '--max-semi-space-size=8', given: [HEAP_SIZE_FLAG, PRETENURING_ON], since: 0, minHeapBytes: 2 ** 30 },
]

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
  /** The heap V8 gave this process (`v8.getHeapStatistics().heap_size_limit`), bytes. */
  heapSizeLimit: number
}

/** An inspector flag, in any spelling (`--inspect-port` alone opens nothing: skipping for it costs only speed). */
const INSPECTOR_FLAG = /^--inspect([-_](brk|wait|port)([-_]node)?)?(=.*)?$/

/** NODE_OPTIONS' words (Node splits them at spaces), with the double quotes Node allows around one taken off. */
function optionsOf(nodeOptions: string | undefined): string[] {
  return (nodeOptions ?? '')
    .split(' ')
    .filter(Boolean)
    .map((word) => word.replace(/^"|"$/g, ''))
}

/** The server flags `node` lacks (none: it runs as it is). */
export function missingServerFlags(command: CommandName, node: NodeProcess): string[] {
  if (!SERVERS.has(command)) return []
  const given = [...node.execArgv, ...optionsOf(node.nodeOptions)]
  const major = Number(node.version.split('.')[0])
  return SERVER_FLAGS.filter(
    ({ given: kind, since, minHeapBytes = 0 }) =>
      major >= since &&
      node.heapSizeLimit >= minHeapBytes &&
      !given.some((flag) => kind.some((pattern) => pattern.test(flag))),
  ).map(({ flag }) => flag)
}

/** A relaunch: the flags it adds, and the arguments to give the node binary. */
export interface Relaunch {
  added: string[]
  /** Its node flags, the server flags it lacks, then the script and its arguments. */
  args: string[]
}

/** How to relaunch `command` with the server flags it lacks; undefined when it runs as it is. */
export function serverRelaunch(command: CommandName, node: NodeProcess): Relaunch | undefined {
  if (!node.canExecve || node.hasIpcChannel) return undefined
  const given = [...node.execArgv, ...optionsOf(node.nodeOptions)]
  if (given.some((flag) => INSPECTOR_FLAG.test(flag))) return undefined
  const added = missingServerFlags(command, node)
  // A relaunched process has every flag, so it never relaunches again.
  if (added.length === 0) return undefined
  return { added, args: [...node.execArgv, ...added, ...node.argv.slice(1)] }
}
