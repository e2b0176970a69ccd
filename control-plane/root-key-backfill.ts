import type { Logger } from 'pino'
import type { KeygateServer } from '../shared/http/build-server.js'
import type { RootKeys } from './root-keys.js'

const RETRY_MS = 5_000

/**
 * Publishes the stored root keys to verifiers once the app is ready (RootKeys.backfill), in the background: a
 * control plane starts while Redis is still unreachable, so a failed attempt is retried until one succeeds or the
 * app closes. Register it in a plugin of the app: its onClose then runs (awaiting an attempt in flight) before the
 * composition root's closes the store.
 */
export function backfillRootKeysOnStart(app: KeygateServer, rootKeys: RootKeys, log: Logger): void {
  let closed = false
  let timer: NodeJS.Timeout | undefined
  let inFlight: Promise<void> = Promise.resolve()
  const attempt = (): void => {
    inFlight = rootKeys.backfill().catch((err: unknown) => {
      if (closed) return
      log.warn({ err }, 'stored root keys not yet published to verifiers (v2 keys.verifyKey); retrying')
      timer = setTimeout(attempt, RETRY_MS)
      timer.unref()
    })
  }
  app.addHook('onReady', async () => attempt())
  app.addHook('onClose', async () => {
    closed = true
    clearTimeout(timer)
    await inFlight
  })
}
