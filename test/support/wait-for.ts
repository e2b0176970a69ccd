/** Polls `check` until it returns a truthy value or the time is up (for things that happen on other processes). */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 5_000,
  everyMs = 10,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value) return value
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last instanceof Error ? last.message : JSON.stringify(last)}` : ''}`,
      )
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/**
 * waitFor for a check that asserts on every sample it takes (an `expect` inside it: "never valid past the bound"): it
 * polls `check` until it returns a truthy value, and an error the check throws fails the wait at once instead of being
 * taken for a miss and retried.
 */
export async function pollUntil<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 5_000,
  everyMs = 10,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
