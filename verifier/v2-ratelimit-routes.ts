import type { KeygateServer } from '../shared/http/build-server.js'
import { registerV2RatelimitLimits } from '../shared/http/v2-ratelimit-limit.js'
import type { NamespaceLimits } from '../shared/namespace-limits.js'
import type { Principal } from '../shared/root-key-principal.js'

/**
 * POST /v2/ratelimit.limit and /v2/ratelimit.multiLimit on the verifier. Unlike v1's ratelimits.limit here, every
 * call needs a root key (v2's rule), which `authenticate` checks (missing or malformed header 400, unknown key 401)
 * before the body is read; the permissions are the control plane's. The verifier writes nothing: a namespace it
 * has no record of is counted all the same, under the name given, without overrides (the root key still needs
 * ratelimit.*.create_namespace, as on the control plane, which would make it).
 */
export function registerVerifierV2Ratelimit(
  app: KeygateServer,
  limits: NamespaceLimits,
  authenticate: (authorization: string | string[] | undefined) => Promise<Principal> | Principal,
): void {
  registerV2RatelimitLimits(app, limits, { authenticate })
}
