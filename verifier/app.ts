import { buildServer, type ServerBase } from '../shared/http/build-server.js'
import type { KeygateServer } from '../shared/http/keygate-server.js'
import type { VerifierStore } from '../shared/store/verifier-store.js'
import type { KeyVerifier } from './key-verifier.js'
import { verifyKeyRoute } from './verify-key-route.js'
import { serveRoutes } from '../shared/http/route.js'
import { RootKeyAuthenticator } from '../shared/root-keys/root-key-authenticator.js'
import { CachedRootKeys } from './cached-root-keys.js'
import { authorizeFastRoute, registerAuthorize } from './authorize-route.js'
import type { GatewayPolicy } from '../shared/config/settings.js'
import { registerIndex, type ServerIndex } from '../shared/http/index-route.js'
import { storeReadiness } from '../shared/http/store-readiness.js'
import { boundApi } from './bound-api.js'
import type { NamespaceLimits } from '../shared/ratelimits/namespace-limits.js'
import { verifierLimitRoute } from './ratelimits-limit-route.js'
import { v2VerifyKeyRoute } from './v2-verify-key-route.js'
import { verifierV2LimitRoutes } from './v2-ratelimit-routes.js'

export interface VerifierAppDeps extends ServerBase {
  verifier: KeyVerifier
  store: VerifierStore
  gateway: GatewayPolicy
  /** ratelimits.limit's core (the standalone rate-limit service). */
  ratelimits: NamespaceLimits
  /** KEYGATE_ROOT_KEY: v2's keys.verifyKey accepts it as the control plane does (unless turned off). */
  bootstrapRootKey?: string | undefined
}

const VERIFIER_INDEX: ServerIndex = {
  service: 'keygate verifier',
  about:
    'The verifier sidecar: answers from memory beside your API. Management operations (apis.*, keys.createKey, …) are served by the control plane.',
  links: {
    verifyKey: 'POST /v1/keys.verifyKey, POST /v2/keys.verifyKey (a root key)',
    forwardAuth: '/v1/authorize',
    ratelimits: 'POST /v1/ratelimits.limit, POST /v2/ratelimit.limit, POST /v2/ratelimit.multiLimit',
    errors: '/docs/errors',
    health: '/livez /readyz /metrics',
  },
}

/** The verifier's HTTP surface. Never listens: cli/verifier-command.ts does, tests inject. */
export function buildVerifierApp(deps: VerifierAppDeps): KeygateServer {
  const storeReady = storeReadiness(deps.store)
  // v2 needs a root key for every call: the verifier checks them itself, from the root keys the feed keeps current.
  const rootKeys = new RootKeyAuthenticator(new CachedRootKeys(deps.verifier), deps.bootstrapRootKey)
  // verifyKey, v1 and v2, is the hot path: each is one route, served ahead of Fastify's per-request machinery
  // (shared/http/fast-route.ts) and on Fastify below.
  const verifyKeys = [verifyKeyRoute(deps.verifier), v2VerifyKeyRoute(deps.verifier, rootKeys)]
  const bound = boundApi(deps.store.keys, deps.gateway.apiId, deps.log)
  const app = buildServer({
    ...deps,
    // Per-request logs would dominate the hot path; failures are still logged.
    logRequests: false,
    unmatchedOperation:
      'this is a verifier, which answers keys.verifyKey, ratelimits.limit and /v1/authorize; management operations are served by the control plane',
    fastRoutes: verifyKeys,
    // Forward-auth is a gateway's hot path: served ahead of Fastify too, but for requests Fastify must explain.
    fastHeaderRoute: authorizeFastRoute(deps.verifier, deps.gateway),
    notReadyReasons: async () => [
      ...deps.verifier.notReadyReasons(),
      ...(await storeReady()),
      ...(await bound.notReadyReasons()),
    ],
  })
  // At start-up, so that a bound api that does not exist is logged at once (not awaited: Redis may be down).
  app.addHook('onReady', async () => {
    void bound.notReadyReasons()
  })
  registerIndex(app, VERIFIER_INDEX)
  serveRoutes(app, undefined, [
    ...verifyKeys,
    verifierLimitRoute(deps.ratelimits),
    ...verifierV2LimitRoutes(deps.ratelimits, rootKeys),
  ])
  registerAuthorize(app, deps.verifier, deps.gateway, deps.docsBaseUrl)
  return app
}
