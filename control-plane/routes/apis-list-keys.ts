import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { toKeyResponse } from '../key-response.js'
import { listApiKeys } from '../key-listing.js'
import { KeyResponse } from '../schemas/key-schemas.js'
import { ApiIdField, DecryptField } from '../schemas/fields.js'
import { callerOf } from '../root-key-auth.js'

const Query = Type.Object({
  apiId: ApiIdField('The api whose keys to list: the `apiId` that apis.createApi returned'),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 100, description: 'Keys per page, 1–100', examples: [10] }),
  ),
  cursor: Type.Optional(
    Type.String({
      maxLength: 256,
      description: "The previous page's `cursor`, for the page after it; leave out for the first page",
    }),
  ),
  externalId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: 'Only the keys of this owner (their `externalId`)' }),
  ),
  ownerId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: 'Deprecated (Unkey): the same as `externalId`' }),
  ),
  decrypt: DecryptField(),
})

export function registerListKeys(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/apis.listKeys',
    {
      schema: {
        querystring: Query,
        response: {
          200: Type.Object({
            keys: Type.Array(KeyResponse, { description: 'This page of keys, sorted by id' }),
            total: Type.Integer({
              description: 'How many keys the api has: all pages, and all owners even when filtered',
            }),
            cursor: Type.Optional(
              Type.String({ description: 'Pass it as `cursor` for the next page; absent on the last page' }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const { apiId, cursor, externalId, ownerId, decrypt, limit = 100 } = request.query
      const page = await listApiKeys(deps, callerOf(request), { apiId, cursor, externalId, ownerId, decrypt, limit })
      return {
        keys: page.keys.map(({ record, context }) => toKeyResponse(record, context)),
        total: page.total,
        cursor: page.cursor,
      }
    },
  )
}
