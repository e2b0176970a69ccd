import type { KeygateServer } from '../shared/http/build-server.js'
import { LimitBody, limitAnswerOf, limitRequestOf, LimitResponse } from '../shared/http/ratelimit-limit-schema.js'
import type { NamespaceLimits } from '../shared/namespace-limits.js'

/**
 * POST /v1/ratelimits.limit on the verifier: no root key (an `Authorization` header, if any, is ignored), as for
 * keys.verifyKey — the sidecar is reachable only beside the API that calls it, and it writes nothing: a namespace
 * it has no record of is counted all the same, without overrides. The control plane's route takes a root key.
 */
export function registerVerifierLimit(app: KeygateServer, limits: NamespaceLimits): void {
  app.post('/v1/ratelimits.limit', { schema: { body: LimitBody, response: { 200: LimitResponse } } }, async (request) =>
    limitAnswerOf(await limits.limit(limitRequestOf(request.body))),
  )
}
