import { invalid } from '../shared/errors.js'

// Any expiry before this is a time in seconds sent as milliseconds (now in seconds reads as January 1970).
const EARLIEST_MS = Date.UTC(2000, 0, 1)

/**
 * createKey: an expiry must lie in the future (a key expired at birth is a mistake). updateKey (`pastAllowed`):
 * any time, as Unkey v1 takes it, so that `expires: now` ends a key at once. Both refuse a time in seconds.
 */
export function checkExpires(
  expires: number | null | undefined,
  nowMs: number,
  { pastAllowed = false }: { pastAllowed?: boolean } = {},
): void {
  if (expires === null || expires === undefined) return
  if (expires < EARLIEST_MS) throw invalid('expires', 'must be unix milliseconds (this looks like seconds)')
  if (!pastAllowed && expires <= nowMs) throw invalid('expires', 'must be in the future (unix milliseconds)')
}
