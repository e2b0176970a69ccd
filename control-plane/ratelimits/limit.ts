import type { NamespaceLimitOutcome, NamespaceLimitRequest } from '../../shared/ratelimits/namespace-limits.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { namespaceOnFirstUse } from './namespace-first-use.js'
import { requireNamespaceAction } from '../root-keys/root-key-auth.js'

/**
 * Counts a call of the identifier in its namespace, for a root key with ratelimit.<namespaceId|*>.limit; a namespace
 * named for the first time is made (namespace-first-use.ts). The namespace is read, and the call counted, by the
 * verifier's own code (`deps.ratelimits`), so both processes answer alike.
 */
export async function limit(
  deps: ControlPlaneDeps,
  caller: Caller,
  request: NamespaceLimitRequest,
): Promise<NamespaceLimitOutcome> {
  const namespace =
    (await deps.ratelimits.namespace(request.namespace)) ??
    (await namespaceOnFirstUse(caller, deps, request.namespace, 'limit'))
  requireNamespaceAction(caller.principal, namespace.id, 'limit')
  return deps.ratelimits.limit(request)
}
