import { LimitBody, limitAnswerOf, limitRequestOf, LimitResponse } from '../../../shared/http/ratelimit-limit-schema.js'
import { v1Route } from '../../management-route.js'
import { limit } from './limit.js'

/** v1's ratelimits.limit on the control plane: a root key is needed here (the verifier's takes none). */
export const limitV1 = v1Route({
  operation: 'ratelimits.limit',
  method: 'POST',
  doc: {
    summary: 'Count a call of an identifier in a namespace: may it go on? (the standalone rate-limit service)',
    description:
      "Also served by the verifier sidecar, without a root key (it is reachable only beside your API): call it there to rate-limit anything next to your API. Here it needs `ratelimit.<namespaceId|*>.limit`; a namespace named for the first time is made when the root key also has `ratelimit.*.create_namespace`. Exact across every process unless `async` (or the identifier's override) says otherwise.",
    tag: 'ratelimits',
  },
  input: LimitBody,
  answer: LimitResponse,
  handle: async (body, caller, deps) => limitAnswerOf(await limit(deps, caller, limitRequestOf(body))),
})
