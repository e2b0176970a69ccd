import { badRequest } from '../shared/errors.js'

/** An expiry must lie in the future: a key that is expired at birth is almost always seconds sent as milliseconds. */
export function checkExpires(expires: number | null | undefined, nowMs: number): void {
  if (expires === null || expires === undefined) return
  if (expires <= nowMs) throw badRequest('expires: must be in the future (unix milliseconds)')
}
