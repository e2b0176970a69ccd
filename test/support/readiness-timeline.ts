/** One /readyz answer: when it came, and whether it was 200 (a request that failed is not ready). */
export interface ReadinessSample {
  at: number
  ready: boolean
}

/** When the first ready sample after `t` came; undefined: none yet. */
export function readyAfter(samples: readonly ReadinessSample[], t: number): number | undefined {
  return samples.find(({ at, ready }) => ready && at > t)?.at
}

/**
 * How long after `t` the process was ready for good, in ms: until the first ready sample after the last not-ready one.
 * 0 when it was ready before `t` (or never not ready); Infinity when no sample after the last not-ready one was ready.
 */
export function readyAgainAfter(samples: readonly ReadinessSample[], t: number): number {
  const lastNotReady = samples.findLast(({ ready }) => !ready)
  if (!lastNotReady) return 0
  return Math.max(0, (readyAfter(samples, lastNotReady.at) ?? Infinity) - t)
}
