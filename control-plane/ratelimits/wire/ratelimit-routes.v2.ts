import type { Route } from '../../../shared/http/route.js'
import { v2RatelimitLimitRoutes } from '../../../shared/ratelimits/v2-limit-routes.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { rootKeyCaller } from '../../http/management-route.js'
import { createNamespace } from '../namespace-first-use.js'

/**
 * v2's ratelimit.limit and ratelimit.multiLimit on the control plane: the management API's caller, and a namespace
 * named for the first time is made, as v1 does. They are the routes the verifier shares
 * (shared/ratelimits/v2-limit-routes.ts); v2's override operations are management routes (control-plane/ratelimits/).
 */
export function v2LimitRoutes(deps: ControlPlaneDeps): Route<void, Caller>[] {
  return v2RatelimitLimitRoutes(deps.ratelimits, {
    authenticate: (request) => rootKeyCaller(request, deps),
    create: (caller, name) => createNamespace(caller, deps, name),
  })
}
