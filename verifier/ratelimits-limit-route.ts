import type { Route } from '../shared/http/route.js'
import {
  LIMIT_DOC,
  LimitBody,
  limitAnswerOf,
  limitRequestOf,
  LimitResponse,
  type LimitBodyInput,
} from '../shared/ratelimits/limit-contract.js'
import type { NamespaceLimits } from '../shared/ratelimits/namespace-limits.js'

/**
 * POST /v1/ratelimits.limit on the verifier: no root key (an `Authorization` header, if any, is ignored), as for
 * keys.verifyKey — the sidecar is reachable only beside the API that calls it, and it writes nothing: a namespace
 * it has no record of is counted all the same, without overrides. The control plane's route takes a root key. The
 * contract both serve (body, answer, the reference's text) is shared/ratelimits/limit-contract.ts.
 */
export function verifierLimitRoute(limits: NamespaceLimits): Route {
  return {
    id: 'ratelimits.limit',
    method: 'POST',
    url: '/v1/ratelimits.limit',
    doc: { ...LIMIT_DOC, rootKey: false },
    input: LimitBody,
    response: LimitResponse,
    handle: async (body: LimitBodyInput) => limitAnswerOf(await limits.limit(limitRequestOf(body))),
  }
}
