import { Type } from 'typebox'
import { ApiError } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { registerV2, v2Pagination } from '../../shared/http/v2-route.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { searchFor } from '../index-page.js'
import { namedIdentity } from '../identity-access.js'
import { createIdentity, deleteIdentity, updateIdentity } from '../identity-operations.js'
import { checkMeta } from '../meta-limits.js'
import { namedLimitsOf } from '../named-limits.js'
import { may, principalOf, callerOf } from '../root-key-auth.js'
import {
  V2CreateIdentityBody,
  V2Identity,
  V2IdentityBody,
  V2ListIdentitiesBody,
  V2UpdateIdentityBody,
  v2Identity,
} from './identities-schemas.js'
import { V2_PAGE } from './list-body.js'

/** v2's identities.* (Unkey's V2Identities* schemas) over the operations v1 uses (identity-operations.ts). */
export function registerV2IdentityRoutes(app: KeygateServer, deps: ControlPlaneDeps): void {
  registerV2(
    app,
    'identities.createIdentity',
    {
      body: V2CreateIdentityBody,
      data: Type.Object({ identityId: Type.String({ description: "The new identity's id" }) }),
    },
    async (request) => {
      const { externalId, meta, ratelimits } = request.body
      const identity = await createIdentity(deps, callerOf(request), { externalId, meta, ratelimits })
      return { data: { identityId: identity.id } }
    },
  )

  registerV2(app, 'identities.getIdentity', { body: V2IdentityBody, data: V2Identity }, async (request) => {
    const found = await namedIdentity(deps.identities, principalOf(request), request.body.identity, 'read_identity')
    return { data: v2Identity(found.doc) }
  })

  registerV2(
    app,
    'identities.listIdentities',
    {
      body: V2ListIdentitiesBody,
      data: Type.Array(V2Identity, { description: 'Identities, oldest first' }),
      paged: true,
    },
    async (request) => {
      const { limit = V2_PAGE, cursor, search } = request.body
      const matches = searchFor(search)
      const page = await deps.identities.page({ cursor, limit }, (identity) =>
        matches([identity.id, identity.externalId]),
      )
      // Unkey's: identity.*.read_identity, or identity.<id>.read_identity for every identity listed. One refusal
      // whatever the page holds: it names no identity, and does not tell whether the search found any.
      const principal = principalOf(request)
      const readable =
        may(principal, 'identity', '*', 'read_identity') ||
        (page.records.length > 0 &&
          page.records.every((identity) => may(principal, 'identity', identity.id, 'read_identity')))
      if (!readable)
        throw new ApiError(
          'INSUFFICIENT_PERMISSIONS',
          'the root key needs identity.*.read_identity, or identity.<id>.read_identity for every identity listed',
        )
      return { data: page.records.map(v2Identity), pagination: v2Pagination(page.cursor) }
    },
  )

  registerV2(app, 'identities.updateIdentity', { body: V2UpdateIdentityBody, data: V2Identity }, async (request) => {
    const { identity, meta, ratelimits } = request.body
    // The root key first, as Unkey's (which needs identity.*.update_identity before reading the input): Keygate
    // also takes identity.<id>.update_identity, which needs the identity found, so the input is checked after.
    const found = await namedIdentity(deps.identities, principalOf(request), identity, 'update_identity')
    const limits = ratelimits && namedLimitsOf(ratelimits)
    checkMeta(meta)
    return {
      data: v2Identity(await updateIdentity(deps, callerOf(request), found.doc.id, { meta, ratelimits: limits })),
    }
  })

  registerV2(
    app,
    'identities.deleteIdentity',
    { body: V2IdentityBody, data: Type.Object({}, { description: 'Nothing: the identity is gone' }) },
    async (request) => {
      const found = await namedIdentity(deps.identities, principalOf(request), request.body.identity, 'delete_identity')
      await deleteIdentity(deps, callerOf(request), found.doc.id)
      return { data: {} }
    },
  )
}
