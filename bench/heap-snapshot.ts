import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { ChildProcess } from 'node:child_process'

/**
 * The live JS heap of a running process, measured exactly: the process is started with
 * `--heapsnapshot-signal=SIGWINCH --diagnostic-dir=DIR` (SIGWINCH because close-with-grace shuts down on SIGUSR2),
 * V8 collects garbage before it writes the snapshot, and the sum of every node's self size is what is retained.
 * RSS cannot tell a leak from an allocator that keeps freed pages; this can.
 */
export const HEAP_SNAPSHOT_SIGNAL = 'SIGWINCH'

export function heapSnapshotNodeOptions(dir: string): string {
  return `--heapsnapshot-signal=${HEAP_SNAPSHOT_SIGNAL} --diagnostic-dir=${dir}`
}

export async function liveHeapBytes(child: ChildProcess, dir: string, timeoutMs = 60_000): Promise<number> {
  const before = new Set(existsSync(dir) ? readdirSync(dir) : [])
  child.kill(HEAP_SNAPSHOT_SIGNAL)
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500))
    const file = readdirSync(dir).find(
      (name) => name.includes(`.${child.pid}.`) && name.endsWith('.heapsnapshot') && !before.has(name),
    )
    if (!file) continue
    // V8 writes the file in pieces: it is complete once its size stops changing and it parses.
    const path = join(dir, file)
    let size = -1
    while (statSync(path).size !== size) {
      size = statSync(path).size
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    try {
      return totalSelfSize(JSON.parse(readFileSync(path, 'utf8')))
    } catch {
      continue
    }
  }
  throw new Error(`no heap snapshot from pid ${child.pid} within ${timeoutMs} ms`)
}

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[] } }
  nodes: number[]
}

function totalSelfSize(snapshot: HeapSnapshot): number {
  const fields = snapshot.snapshot.meta.node_fields
  const stride = fields.length
  const selfSize = fields.indexOf('self_size')
  let total = 0
  for (let i = selfSize; i < snapshot.nodes.length; i += stride) total += snapshot.nodes[i]!
  return total
}
