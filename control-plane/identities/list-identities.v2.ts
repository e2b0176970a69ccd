import { Type } from 'typebox'
import { v2Pagination } from '../../shared/http/v2-route.js'
import { v2Route } from '../http/management-route.js'
import { NAMES_NO_RECORD } from '../openapi/v2-operations.js'
import { V2Identity, v2Identity } from './wire/identity-schemas.v2.js'
import { V2_PAGE, V2ListBody } from '../wire/list-body.v2.js'
import { listIdentities } from './list-identities.js'

/** v2's identities.listIdentities: filtered by `search`, for a root key that may read every identity listed. */
export const listIdentitiesV2 = v2Route({
  operation: 'identities.listIdentities',
  doc: { summary: 'List identities, a page at a time', tag: 'v2 identities', errors: NAMES_NO_RECORD },
  body: V2ListBody('identities', 'id or externalId'),
  data: Type.Array(V2Identity, { description: 'Identities, oldest first' }),
  paged: true,
  handle: async ({ limit = V2_PAGE, cursor, search }, caller, deps) => {
    const page = await listIdentities(deps, caller, { listing: { search }, cursor, limit })
    return { data: page.records.map(v2Identity), pagination: v2Pagination(page.cursor) }
  },
})
