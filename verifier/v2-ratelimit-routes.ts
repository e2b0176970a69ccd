import type { Route } from '../shared/http/route.js'
import type { NamespaceLimits } from '../shared/ratelimits/namespace-limits.js'
import { v2RatelimitLimitRoutes, type RootKeyCaller } from '../shared/ratelimits/v2-limit-routes.js'
import type { RootKeyAuthenticator } from '../shared/root-keys/root-key-authenticator.js'

/**
 * POST /v2/ratelimit.limit and /v2/ratelimit.multiLimit on the verifier. Unlike v1's ratelimits.limit here, every
 * call needs a root key (v2's rule), checked (missing or malformed header 400, unknown key 401) before the body is
 * read; the permissions are the control plane's. The verifier writes nothing: a namespace it has no record of is
 * counted all the same, under the name given, without overrides (the root key still needs
 * ratelimit.*.create_namespace, as on the control plane, which would make it).
 */
export function verifierV2LimitRoutes(
  limits: NamespaceLimits,
  rootKeys: Pick<RootKeyAuthenticator, 'principalOf'>,
): Route<void, RootKeyCaller>[] {
  return v2RatelimitLimitRoutes(limits, {
    authenticate: (request) => {
      const principal = rootKeys.principalOf(request.headers.authorization)
      return principal instanceof Promise ? principal.then((found) => ({ principal: found })) : { principal }
    },
  })
}
