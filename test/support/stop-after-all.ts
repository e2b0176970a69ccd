import { afterAll } from 'vitest'

/** Anything with stop(): register it and it is stopped after the file's tests, the last registered first. */
export function stopAfterAll(): { stop(): Promise<unknown> }[] {
  const stoppable: { stop(): Promise<unknown> }[] = []
  afterAll(async () => {
    await Promise.all(stoppable.reverse().map((p) => p.stop()))
  })
  return stoppable
}
