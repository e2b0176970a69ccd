import type { KeygateServer } from '../../shared/http/build-server.js'
import { registerV2RatelimitLimits } from '../../shared/http/v2-ratelimit-limit.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { createNamespace } from '../namespace-first-use.js'
import { callerOf } from '../root-key-auth.js'

/**
 * v2's ratelimit.limit and ratelimit.multiLimit on the control plane: a namespace named for the first time is made,
 * as v1 does. They are served by the registration the verifier shares (shared/http/v2-ratelimit-limit.ts), whose
 * handlers check the root key's rights on the request itself; v2's override operations are management routes
 * (control-plane/operations/ratelimits/).
 */
export function registerV2LimitRoutes(app: KeygateServer, deps: ControlPlaneDeps): void {
  // The management hook has checked the root key.
  registerV2RatelimitLimits(app, deps.ratelimits, {
    create: (request, name) => createNamespace(callerOf(request), deps, name),
  })
}
