import { Type } from 'typebox'
import { v2Route } from '../http/management-route.js'
import { V2Identity, V2IdentityField, V2IdentityMeta, v2Identity } from './wire/identity-schemas.v2.js'
import { V2RatelimitRequests } from '../wire/named-limit-schemas.v2.js'
import { updateIdentity } from './update-identity.js'
import { UsageThresholdsInput } from '../analytics/wire/usage-threshold-schemas.js'

const UpdateIdentityBody = Type.Object(
  {
    identity: V2IdentityField(),
    meta: Type.Optional(V2IdentityMeta('Replaces its meta (`{}` clears it; left out, kept)')),
    ratelimits: Type.Optional(V2RatelimitRequests('Replaces its rate limits (`[]` removes them; left out, kept)')),
    usageThresholds: Type.Optional(UsageThresholdsInput('identity')),
  },
  { additionalProperties: false },
)

/** v2's identities.updateIdentity: as Unkey's, the root key's right comes before the input's rules. */
export const updateIdentityV2 = v2Route({
  operation: 'identities.updateIdentity',
  doc: { summary: "Replace an identity's meta or rate limits (every key of it follows)", tag: 'v2 identities' },
  body: UpdateIdentityBody,
  data: V2Identity,
  handle: async ({ identity, meta, ratelimits, usageThresholds }, caller, deps) => {
    const name = { idOrExternalId: identity }
    const input = { identity: name, meta, ratelimits, usageThresholds, inputCheck: 'after-access' as const }
    return { data: v2Identity(await updateIdentity(deps, caller, input)) }
  },
})
