import type { Logger } from 'pino'
import type { RootKeys } from './root-keys.js'

const RETRY_MS = 5_000
/**
 * Between two reconciles. A root key revoked by a control plane or CLI that does not publish root keys to verifiers
 * (mixed versions during a rolling upgrade) writes no tombstone: a reconcile writes it, so verifiers refuse it within
 * this plus the revocation bound. Steady state, a reconcile reads the root keys and the published index: two reads.
 */
const RECONCILE_MS = 1_000

const NO_ROOT_KEY =
  'no root key can authenticate: none is stored and no bootstrap key is on (KEYGATE_ROOT_KEY), so every management ' +
  "call is refused. Make one: keygate root-key create --permissions '*' (with this control plane's REDIS_URL)"

export interface BackfillDeps {
  rootKeys: RootKeys
  hasBootstrapRootKey: boolean
  /** Resolves once the store has answered: the first attempt waits for it, so that a start-up does not warn. */
  storeReached: Promise<void>
  log: Logger
}

/**
 * Publishes the stored root keys to verifiers once the app is ready and the store has answered (RootKeys.backfill),
 * then reconciles them every RECONCILE_MS, in the background: a control plane starts while Redis is still
 * unreachable, so a failed attempt is retried until the app closes, and warned of, since the store did answer once.
 * Started when the app is ready; stopped (awaiting an attempt in flight) when it closes, before the composition root
 * closes the store.
 */
export function rootKeyBackfill(deps: BackfillDeps): { start(): void; stop(): Promise<void> } {
  const { rootKeys, hasBootstrapRootKey, log } = deps
  let closed = false
  let timer: NodeJS.Timeout | undefined
  let inFlight: Promise<void> = Promise.resolve()
  let lockedOut = false
  const attempt = (): void => {
    inFlight = rootKeys.backfill().then(
      (found) => {
        // Nothing can authenticate: said once when it starts (at start-up, or when the last root key goes), loudly,
        // since every management call is refused until someone with access to Redis makes a root key.
        const nowLockedOut = found.stored === 0 && (!hasBootstrapRootKey || found.bootstrapDisabled)
        if (nowLockedOut && !lockedOut) log.error(NO_ROOT_KEY)
        lockedOut = nowLockedOut
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
  return {
    start: () => {
      void deps.storeReached.then(() => {
        if (!closed) attempt()
      })
    },
    stop: async () => {
      closed = true
      clearTimeout(timer)
      await inFlight
    },
  }
}
