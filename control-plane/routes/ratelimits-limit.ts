import type { KeygateServer } from '../../shared/http/build-server.js'
import { LimitBody, limitAnswerOf, limitRequestOf, LimitResponse } from '../../shared/http/ratelimit-limit-schema.js'
import type { NamespaceLimits } from '../../shared/namespace-limits.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { namespaceOnFirstUse } from '../namespace-first-use.js'
import { principalOf, requireNamespaceAction, callerOf } from '../root-key-auth.js'

/**
 * POST /v1/ratelimits.limit on the control plane: a root key with ratelimit.<namespaceId|*>.limit; a namespace
 * named for the first time is made (namespace-first-use.ts). The namespace is read, and the call counted, by the
 * verifier's own code (handed in as `limits`), so both processes answer alike.
 */
export function registerLimit(app: KeygateServer, deps: ControlPlaneDeps, limits: NamespaceLimits): void {
  app.post(
    '/v1/ratelimits.limit',
    { schema: { body: LimitBody, response: { 200: LimitResponse } } },
    async (request) => {
      const call = limitRequestOf(request.body)
      const namespace =
        (await limits.namespace(call.namespace)) ??
        (await namespaceOnFirstUse(callerOf(request), deps, call.namespace, 'limit'))
      requireNamespaceAction(principalOf(request), namespace.id, 'limit')
      return limitAnswerOf(await limits.limit(call))
    },
  )
}
