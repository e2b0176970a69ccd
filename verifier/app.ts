import type { Logger } from 'pino'
import { buildServer, type KeygateServer } from '../shared/http/build-server.js'
import type { HttpMetrics } from '../shared/http/metrics-registry.js'
import type { KeyStore } from '../shared/store/key-store.js'
import type { KeyVerifier } from './key-verifier.js'
import { registerVerifyKey } from './verify-key-route.js'
import { storeReadiness } from '../shared/http/store-readiness.js'

export interface VerifierAppDeps {
  verifier: KeyVerifier
  store: KeyStore
  log: Logger
  metrics: HttpMetrics
  bodyLimitBytes: number
  docsBaseUrl: string
}

/** The verifier's HTTP surface. Never listens: verifier/main.ts does, tests inject. */
export function buildVerifierApp(deps: VerifierAppDeps): KeygateServer {
  const storeReady = storeReadiness(deps.store)
  const app = buildServer({
    log: deps.log,
    metrics: deps.metrics,
    bodyLimitBytes: deps.bodyLimitBytes,
    docsBaseUrl: deps.docsBaseUrl,
    // Per-request logs would dominate the hot path; failures are still logged.
    logRequests: false,
    notReadyReasons: async () => [
      ...(deps.verifier.ready ? [] : ['change feed not subscribed and synced']),
      ...(await storeReady()),
    ],
  })
  registerVerifyKey(app, deps.verifier)
  return app
}
