import { afterAll } from 'vitest'
import { startKeygate, type KeygateProcess } from './processes.js'

/** A control plane and its verifiers, as real processes on one Redis. */
export interface KeygateStack {
  controlPlane: KeygateProcess
  verifiers: KeygateProcess[]
}

export interface KeygateStackOptions {
  redisUrl: string
  rootKey: string
  /** The revocation bound the processes keep (MAX_STALENESS_MS). */
  maxStalenessMs: number
  /** What the control plane is given beyond the common settings. */
  controlPlane?: Record<string, string>
  /** One entry per verifier: what it is given beyond the common settings. */
  verifiers: Record<string, string>[]
}

/**
 * Starts a control plane and verifiers side by side, polling every 250 ms under the bound, and stops them after the
 * file's tests: what the end-to-end tests of "every verifier within the bound" run against.
 */
export function keygateStack(): (options: KeygateStackOptions) => Promise<KeygateStack> {
  const running: KeygateProcess[] = []
  afterAll(async () => {
    await Promise.all(running.map((process) => process.stop()))
  })
  return async (options) => {
    const env = {
      REDIS_URL: options.redisUrl,
      KEYGATE_ROOT_KEY: options.rootKey,
      LOG_LEVEL: 'warn',
      MAX_STALENESS_MS: String(options.maxStalenessMs),
      POLL_INTERVAL_MS: '250',
    }
    const started = await Promise.allSettled([
      startKeygate(['control-plane'], { ...env, ...options.controlPlane }),
      ...options.verifiers.map((extra) => startKeygate(['verifier'], { ...env, ...extra })),
    ])
    // Those that started are stopped after the file, even when another failed to.
    for (const outcome of started) if (outcome.status === 'fulfilled') running.push(outcome.value)
    const failed = started.find((outcome) => outcome.status === 'rejected')
    if (failed) throw failed.reason
    const [controlPlane, ...verifiers] = running.slice(-started.length)
    return { controlPlane: controlPlane!, verifiers }
  }
}
