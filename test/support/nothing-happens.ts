/**
 * Waits out a span in which a test shows that something does not happen (no request forwarded, no event, no count):
 * the one kind of wait on the clock that a condition cannot replace. Every call says beside it what must not happen;
 * anything the test waits *for* uses waitFor (wait-for.ts) or an owned clock instead.
 */
export function nothingHappensFor(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
