import { Type } from 'typebox'
import { ApiError, badRequest, notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { toKeyResponse } from '../key-response.js'
import { principalOf, requirePermission } from '../root-key-auth.js'
import { KeyResponse } from '../schemas/key-schemas.js'
import { ApiIdField, DecryptField } from '../schemas/fields.js'

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
      const principal = principalOf(request)
      const { apiId, cursor, decrypt } = request.query
      const limit = request.query.limit ?? 100
      requirePermission(principal, apiId, 'read_key', 'read_api')
      if (decrypt)
        throw new ApiError('PRECONDITION_FAILED', 'decrypt: Keygate stores only hashes; keys cannot be shown again')
      const { externalId, ownerId } = request.query
      if (externalId !== undefined && ownerId !== undefined && externalId !== ownerId) {
        throw badRequest('externalId: differs from its alias ownerId')
      }
      if (!(await deps.store.getApi(apiId))) throw notFound(`api ${apiId} not found`)
      const page = await deps.store.listKeys(apiId, { cursor, limit, ownerId: externalId ?? ownerId })
      // One memo for the page: the keys of an api mostly share their roles and permissions.
      const memo = new Map<string, unknown>()
      const contexts = await Promise.all(page.keys.map((key) => deps.rbac.contextOf(key, memo)))
      return {
        keys: page.keys.map((key, i) => toKeyResponse(key, contexts[i]!)),
        total: page.total,
        cursor: page.cursor,
      }
    },
  )
}
