import { afterAll } from 'vitest'

interface Stoppable {
  stop(): Promise<unknown>
}

/** The list stopAfterAll keeps, and `stopped`, for what is still starting. */
export interface StopAfterAll extends Array<Stoppable> {
  /**
   * What `starting` resolves to, registered as soon as it has started: several things started side by side are each
   * stopped after the file, whatever else fails to start.
   */
  stopped: <T extends Stoppable>(starting: Promise<T>) => Promise<T>
}

/** Anything with stop(): register it and it is stopped after the file's tests, the last registered first. */
export function stopAfterAll(): StopAfterAll {
  const stoppable = Object.assign([] as Stoppable[], {
    stopped: <T extends Stoppable>(starting: Promise<T>) =>
      starting.then((started) => {
        stoppable.push(started)
        return started
      }),
  })
  afterAll(async () => {
    await Promise.all(stoppable.reverse().map((p) => p.stop()))
  })
  return stoppable
}
