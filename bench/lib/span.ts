/** A stretch of time a bench server's thread was held by its own work: a collection, a timer callback. */
export interface Span {
  /** When it began, ms since the epoch. */
  beganEpochMs: number
  durationMs: number
}
