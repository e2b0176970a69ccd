/** Time as the code sees it: tests inject a clock they move by hand instead of sleeping. */
export interface Clock {
  /** Unix milliseconds. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** Milliseconds that only move forward, whatever happens to the wall clock: for measuring elapsed time. */
export const monotonicClock: Clock = { now: () => performance.now() }

let anchor = Date.now() + 0.5 - performance.now()

/**
 * Unix time in microseconds, finer than Date.now()'s milliseconds: the monotonic clock (slewed with the wall
 * clock by NTP, so they keep pace) anchored to the wall clock, and re-anchored when the two part by more than
 * Date.now()'s rounding allows (the wall clock was stepped). For latencies measured across processes.
 */
export function wallMicros(): number {
  const coarse = Date.now()
  let fine = anchor + performance.now()
  if (fine < coarse - 1 || fine > coarse + 2) {
    anchor = coarse + 0.5 - performance.now()
    fine = anchor + performance.now()
  }
  return Math.round(fine * 1000)
}
