import { Type } from 'typebox'
import { ApiError, badRequest, notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { toKeyResponse } from '../key-response.js'
import { principalOf, requirePermission } from '../root-key-auth.js'
import { KeyResponse } from '../schemas/key-schemas.js'

const Query = Type.Object({
  apiId: Type.String({ minLength: 1, maxLength: 256 }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 })),
  cursor: Type.Optional(Type.String({ maxLength: 256 })),
  externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  ownerId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  decrypt: Type.Optional(Type.Boolean()),
})

export function registerListKeys(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/apis.listKeys',
    {
      schema: {
        querystring: Query,
        response: {
          200: Type.Object({
            keys: Type.Array(KeyResponse),
            total: Type.Integer(),
            cursor: Type.Optional(Type.String()),
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
      return { keys: page.keys.map(toKeyResponse), total: page.total, cursor: page.cursor }
    },
  )
}
