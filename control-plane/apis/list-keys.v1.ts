import { Type } from 'typebox'
import { toKeyResponse } from '../keys/key-response.js'
import { v1Route } from '../http/management-route.js'
import { ApiIdField, DecryptField } from '../wire/fields.js'
import { KeyResponse } from '../keys/wire/key-schemas.js'
import { listKeys } from './list-keys.js'

const ListKeysQuery = Type.Object({
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

/** v1's apis.listKeys, a GET: a full page carries a cursor even when it is the last. */
export const listKeysV1 = v1Route({
  operation: 'apis.listKeys',
  method: 'GET',
  doc: { summary: "List an api's keys, a page at a time", tag: 'apis' },
  input: ListKeysQuery,
  answer: Type.Object({
    keys: Type.Array(KeyResponse, { description: 'This page of keys, sorted by id' }),
    total: Type.Integer({ description: 'How many keys the api has: all pages, and all owners even when filtered' }),
    cursor: Type.Optional(
      Type.String({ description: 'Pass it as `cursor` for the next page; absent on the last page' }),
    ),
  }),
  handle: async ({ apiId, cursor, externalId, ownerId, decrypt, limit = 100 }, caller, deps) => {
    const page = await listKeys(deps, caller, { apiId, cursor, externalId, ownerId, decrypt, limit })
    return {
      keys: page.keys.map(({ record, context }) => toKeyResponse(record, context)),
      total: page.total,
      cursor: page.cursor,
    }
  },
})
