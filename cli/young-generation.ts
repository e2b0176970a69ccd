import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** What a reset did: the young generation's size (both semi-spaces, bytes) before and after, and the pause. */
export interface YoungGenerationReset {
  beforeBytes: number
  afterBytes: number
  ms: number
}

/** V8's young generation ("new space"), bytes reserved for it now. */
export function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0
}

/**
 * Gives back the young generation that start-up grew, once start-up is over: one memory-reducing collection.
 *
 * Why: loading the verifier's modules and compiling its schemas leaves V8's young generation at 32 MB, and V8 shrinks
 * it only while the process idles, which a busy sidecar does not. From there every scavenge sweeps the buffers of
 * thousands of requests at once — 1.3 ms at 10,000 req/s where a server starting at 1 MB pauses 0.3 ms — and on a slow
 * host the pauses left a backlog whose survivors grew it to its 128 MB maximum, with scavenges of 40–70 ms and a p99
 * in the tens of milliseconds (bench/RESULTS.md, 2026-11-25 evening). After this collection it is 1 MB, as a server
 * that started light begins, and it grows only as the load asks.
 *
 * The collector is reached as the `expose-gc` package reaches it (the flag, then a fresh context, which has `gc`); the
 * flag is turned off again at once. Only a "last-resort" collection reduces the young generation, and only V8 13 and
 * later (Node 24) honour that option: on older V8 this is one full collection that leaves the size as it was.
 */
export function resetYoungGeneration(): YoungGenerationReset {
  const beforeBytes = youngGenerationBytes()
  setFlagsFromString('--expose-gc')
  let collect: (options: object) => void
  try {
    collect = runInNewContext('gc') as typeof collect
  } finally {
    setFlagsFromString('--no-expose-gc')
  }
  const started = performance.now()
  collect({ type: 'major', execution: 'sync', flavor: 'last-resort' })
  return { beforeBytes, afterBytes: youngGenerationBytes(), ms: performance.now() - started }
}
