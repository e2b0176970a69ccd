import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { principalOf, requireAction } from '../root-key-auth.js'
import { ListIdentitiesQuery, ListIdentitiesResponse, MAX_IDENTITIES_PAGE } from '../schemas/identity-schemas.js'

// Unkey's identities have an environment that v1 cannot set: every one is in this one.
const ENVIRONMENT = 'default'

export function registerListIdentities(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/identities.listIdentities',
    { schema: { querystring: ListIdentitiesQuery, response: { 200: ListIdentitiesResponse } } },
    async (request) => {
      const { environment = ENVIRONMENT, limit = MAX_IDENTITIES_PAGE, cursor } = request.query
      // Unkey's: identity.<environment>.read_identity lists the environment's identities.
      requireAction(principalOf(request), 'identity', environment, 'read_identity')
      if (environment !== ENVIRONMENT) return { identities: [], total: 0 }
      const page = await deps.identities.list({ cursor, limit })
      return {
        identities: page.identities.map(({ id, externalId, ratelimits }) => ({
          id,
          externalId,
          ratelimits: ratelimits ?? [],
        })),
        total: page.total,
        cursor: page.cursor,
      }
    },
  )
}
