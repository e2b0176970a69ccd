import { Type } from 'typebox'
import { IDENTITY_ENVIRONMENT } from './identity-access.js'
import { v1Route } from '../http/management-route.js'
import { EnvironmentField } from './wire/identity-schemas.js'
import { NamedRateLimitsResponse } from '../wire/named-limit-schemas.js'
import { LIMITS } from '../input-limits.js'
import { listIdentities } from './list-identities.js'

/** At most this many identities in one page (Unkey's). */
const MAX_IDENTITIES_PAGE = 100

const ListIdentitiesQuery = Type.Object({
  environment: Type.Optional(EnvironmentField()),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_IDENTITIES_PAGE,
      description: `At most this many identities (default ${MAX_IDENTITIES_PAGE})`,
    }),
  ),
  cursor: Type.Optional(
    Type.String({ maxLength: LIMITS.idLength, description: 'Where to go on from: the `cursor` of the page before' }),
  ),
})

const ListIdentitiesResponse = Type.Object({
  identities: Type.Array(
    Type.Object({
      id: Type.String({ description: "The identity's id" }),
      externalId: Type.String({ description: 'Its id in your system' }),
      ratelimits: NamedRateLimitsResponse,
    }),
    { description: 'Identities in id order (oldest first)' },
  ),
  total: Type.Integer({ description: 'How many identities there are' }),
  cursor: Type.Optional(Type.String({ description: 'Pass it as `cursor` for the next page; absent on the last' })),
})

/** v1's identities.listIdentities: a GET, by environment (Unkey's), with the total; no meta. */
export const listIdentitiesV1 = v1Route({
  operation: 'identities.listIdentities',
  method: 'GET',
  doc: { summary: 'List identities, a page at a time', tag: 'identities' },
  input: ListIdentitiesQuery,
  answer: ListIdentitiesResponse,
  handle: async ({ environment = IDENTITY_ENVIRONMENT, limit = MAX_IDENTITIES_PAGE, cursor }, caller, deps) => {
    const page = await listIdentities(deps, caller, { listing: { environment }, cursor, limit })
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
})
