import { Type } from 'typebox'
import { v2Pagination } from '../../shared/http/v2-route.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v2Route } from '../http/management-route.js'
import { ApiIdField } from '../wire/fields.js'
import { KeyData, toKeyData } from '../keys/wire/key-data.v2.js'
import { listKeys } from './list-keys.js'

const ListKeysBody = Type.Object(
  {
    apiId: ApiIdField('The api whose keys to list: the `apiId` that apis.createApi returned'),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Keys per page, 1–100 (default 100)' })),
    cursor: Type.Optional(
      Type.String({ maxLength: 256, description: "The previous page's `pagination.cursor`, for the page after it" }),
    ),
    externalId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'Only the keys of this owner (their externalId)' }),
    ),
    decrypt: Type.Optional(
      Type.Boolean({ description: 'Show the keys themselves: Keygate keeps only hashes, so `true` answers 412' }),
    ),
    revalidateKeysCache: Type.Optional(
      Type.Boolean({ description: "Unkey's cache switch: Keygate reads the store every time, so it changes nothing" }),
    ),
  },
  { additionalProperties: false, examples: [{ apiId: WIRE_EXAMPLES.apiId, limit: 10 }] },
)

/**
 * v2's apis.listKeys: the last page carries no cursor (the SDK asks for another page while one comes back); a root
 * key without read_key and read_api on the api is told the api does not exist (404).
 */
export const listKeysV2 = v2Route({
  operation: 'apis.listKeys',
  doc: {
    summary: "List an api's keys, a page at a time (`pagination.cursor` asks for the next)",
    tag: 'v2 apis',
  },
  body: ListKeysBody,
  data: Type.Array(KeyData, { description: 'This page of keys, sorted by id (creation order)' }),
  paged: true,
  handle: async ({ apiId, limit = 100, cursor, externalId, decrypt }, caller, deps) => {
    const page = await listKeys(deps, caller, { apiId, limit, cursor, externalId, decrypt, exactEnd: true })
    return {
      data: page.keys.map(({ record, context }) => toKeyData(record, context)),
      pagination: v2Pagination(page.cursor),
    }
  },
})
