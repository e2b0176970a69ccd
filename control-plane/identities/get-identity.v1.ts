import { Type } from 'typebox'
import { toIdentityResponse } from './identity-response.js'
import { v1Route } from '../http/management-route.js'
import { ExternalIdField, IdentityIdField, IdentityResponse } from './wire/identity-schemas.js'
import { getIdentity } from './get-identity.js'

const GetIdentityQuery = Type.Object({
  identityId: Type.Optional(IdentityIdField('The identity by id (wins when `externalId` is given too)')),
  externalId: Type.Optional(ExternalIdField('The identity by its externalId')),
})

/** v1's identities.getIdentity: a GET naming the identity by `identityId` or `externalId`. */
export const getIdentityV1 = v1Route({
  operation: 'identities.getIdentity',
  method: 'GET',
  doc: { summary: 'Read an identity by id or externalId', tag: 'identities' },
  input: GetIdentityQuery,
  answer: IdentityResponse,
  handle: async ({ identityId, externalId }, caller, deps) =>
    toIdentityResponse(await getIdentity(deps, caller, { identityId, externalId })),
})
