import type { Logger } from 'pino'
import type { KeygateServer } from '../shared/http/build-server.js'
import type { RootKeys } from './root-keys.js'

const RETRY_MS = 5_000
/**
 * Between two reconciles. A root key revoked by a control plane or CLI of a release before verifiers checked root
 * keys (a rolling upgrade) writes no tombstone: a reconcile writes it, so verifiers refuse it within this plus the
 * revocation bound. Steady state, a reconcile reads the root keys and the published index: two reads.
 */
const RECONCILE_MS = 1_000

/**
 * Publishes the stored root keys to verifiers once the app is ready (RootKeys.backfill), then reconciles them every
 * RECONCILE_MS, in the background: a control plane starts while Redis is still unreachable, so a failed attempt is
 * retried until the app closes. Register it in a plugin of the app: its onClose then runs (awaiting an attempt in
 * flight) before the composition root's closes the store.
 */
export function backfillRootKeysOnStart(app: KeygateServer, rootKeys: RootKeys, log: Logger): void {
  let closed = false
  let timer: NodeJS.Timeout | undefined
  let inFlight: Promise<void> = Promise.resolve()
  const attempt = (): void => {
    inFlight = rootKeys.backfill().then(
      () => {
        if (closed) return
        timer = setTimeout(attempt, RECONCILE_MS)
        timer.unref()
      },
      (err: unknown) => {
        if (closed) return
        log.warn({ err }, 'stored root keys not yet reconciled with verifiers (v2 keys.verifyKey); retrying')
        timer = setTimeout(attempt, RETRY_MS)
        timer.unref()
      },
    )
  }
  app.addHook('onReady', async () => attempt())
  app.addHook('onClose', async () => {
    closed = true
    clearTimeout(timer)
    await inFlight
  })
}
