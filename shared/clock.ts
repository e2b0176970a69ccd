/** Time as the code sees it: tests inject a clock they move by hand instead of sleeping. */
export interface Clock {
  /** Unix milliseconds. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** Milliseconds that only move forward, whatever happens to the wall clock: for measuring elapsed time. */
export const monotonicClock: Clock = { now: () => performance.now() }
