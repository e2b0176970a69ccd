/**
 * Rate-limit windows are fixed and aligned to the epoch: two calls meant to fall in one window straddle two when the
 * first lands just before a boundary, and the second is then let through. Tests that count on one window against
 * real processes (a real clock) wait here until the current window has `marginMs` left — at most `marginMs`.
 */
export async function clearOfWindowEdge(durationMs: number, marginMs = 3_000): Promise<void> {
  const left = durationMs - (Date.now() % durationMs)
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50))
}
