import rateLimit from '@fastify/rate-limit'
import { ApiError } from '../../shared/errors/errors.js'
import type { KeygateServer } from '../../shared/http/keygate-server.js'
import { authenticatedCaller } from '../../shared/http/route.js'
import type { Caller } from '../caller.js'

/**
 * Management calls per root key per minute (`MANAGEMENT_RATE_LIMIT`; 0 = off), counted by each control-plane
 * replica in memory. Runs after authentication, so the budget belongs to the root key, not to an address;
 * unauthenticated calls are refused by authentication before they count.
 */
export async function limitManagementCalls(scope: KeygateServer, perMinute: number): Promise<void> {
  if (perMinute === 0) return
  await scope.register(rateLimit, {
    max: perMinute,
    timeWindow: 60_000,
    hook: 'preHandler',
    keyGenerator: (request) => (authenticatedCaller(request) as Caller | undefined)?.principal.rootKeyId ?? request.ip,
    errorResponseBuilder: (_request, context) =>
      new ApiError(
        'RATE_LIMITED',
        `this root key made more than ${context.max} management calls in a minute; retry in ${Math.ceil(context.ttl / 1000)} s`,
        {
          'retry-after': String(Math.ceil(context.ttl / 1000)),
        },
      ),
  })
}
