import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { principalOf, requireRootKeyManagement } from '../root-key-auth.js'
import { rootKeyView } from '../root-keys.js'
import { RootKeyResponse } from '../schemas/root-key-schemas.js'

const Query = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 100, description: 'root keys per page, at most' }),
  ),
  cursor: Type.Optional(
    Type.String({ maxLength: 256, description: 'where the page starts: the cursor of the previous page' }),
  ),
})

/** GET /v1/rootKeys.listRootKeys: the stored root keys, oldest first, never a key or a hash. */
export function registerListRootKeys(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/rootKeys.listRootKeys',
    {
      schema: {
        querystring: Query,
        response: {
          200: Type.Object({
            rootKeys: Type.Array(RootKeyResponse, { description: 'the root keys of this page, oldest first' }),
            cursor: Type.Optional(
              Type.String({ description: 'pass it as `cursor` for the next page; absent on the last page' }),
            ),
          }),
        },
      },
    },
    async (request) => {
      requireRootKeyManagement(principalOf(request))
      const { cursor } = request.query
      const limit = request.query.limit ?? 100
      // Root keys are few: the store answers them all, the page is cut here.
      const after = (await deps.rootKeys.list()).filter((record) => cursor === undefined || record.id > cursor)
      const page = after.slice(0, limit)
      return {
        rootKeys: page.map(rootKeyView),
        cursor: after.length > limit ? page[page.length - 1]!.id : undefined,
      }
    },
  )
}
