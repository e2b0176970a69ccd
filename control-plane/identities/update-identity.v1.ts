import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { toIdentityResponse } from './identity-response.js'
import { v1Route } from '../http/management-route.js'
import {
  EnvironmentField,
  ExternalIdField,
  IdentityIdField,
  IdentityMeta,
  IdentityResponse,
} from './wire/identity-schemas.js'
import { NamedRateLimits } from '../wire/named-limit-schemas.js'
import { updateIdentity } from './update-identity.js'
import { UsageThresholdsInput } from '../analytics/wire/usage-threshold-schemas.js'

const UpdateIdentityBody = Type.Object(
  {
    identityId: Type.Optional(IdentityIdField('The identity by id (wins when `externalId` is given too)')),
    externalId: Type.Optional(ExternalIdField('The identity by its externalId')),
    environment: Type.Optional(EnvironmentField()),
    meta: Type.Optional(IdentityMeta('Replaces its meta (`{}` clears it)')),
    ratelimits: Type.Optional(NamedRateLimits('Replaces its rate limits (`[]` removes them all)')),
    usageThresholds: Type.Optional(UsageThresholdsInput('identity')),
  },
  {
    additionalProperties: false,
    examples: [{ identityId: WIRE_EXAMPLES.identityId, meta: { plan: 'enterprise' } }],
  },
)

/** v1's identities.updateIdentity: as Unkey's, duplicate names and oversized meta are refused before the lookup. */
export const updateIdentityV1 = v1Route({
  operation: 'identities.updateIdentity',
  method: 'POST',
  doc: { summary: "Replace an identity's meta or rate limits (every key of it follows)", tag: 'identities' },
  input: UpdateIdentityBody,
  answer: IdentityResponse,
  handle: async ({ identityId, externalId, environment, meta, ratelimits, usageThresholds }, caller, deps) => {
    const identity = { identityId, externalId, environment }
    const input = { identity, meta, ratelimits, usageThresholds, inputCheck: 'before-lookup' as const }
    return toIdentityResponse(await updateIdentity(deps, caller, input))
  },
})
