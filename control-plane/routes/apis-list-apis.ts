import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { listApis } from '../apis.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { callerOf } from '../root-key-auth.js'

const MAX_PAGE = 100

const Query = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: MAX_PAGE, description: 'Apis per page, 1–100' }),
  ),
  cursor: Type.Optional(
    Type.String({
      maxLength: 256,
      description: "The previous page's `cursor`, for the page after it; leave out for the first page",
    }),
  ),
})

const ListedApi = Type.Object({
  id: Type.String({ description: "The api's id", examples: [WIRE_EXAMPLES.apiId] }),
  name: Type.String({ description: 'Its name' }),
  createdAt: Type.Number({ description: 'When it was created, unix milliseconds' }),
})

/** GET /v1/apis.listApis (Keygate's own: Unkey's v1 has no way to list apis, and the console needs one): apis.ts. */
export function registerListApis(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/apis.listApis',
    {
      schema: {
        querystring: Query,
        response: {
          200: Type.Object({
            apis: Type.Array(ListedApi, { description: 'This page of apis, oldest first' }),
            cursor: Type.Optional(
              Type.String({ description: 'Pass it as `cursor` for the next page; absent on the last page' }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const { cursor, limit = MAX_PAGE } = request.query
      const page = await listApis(deps, callerOf(request), { cursor: cursor || undefined, limit })
      return {
        apis: page.records.map(({ id, name, createdAt }) => ({ id, name, createdAt })),
        cursor: page.cursor,
      }
    },
  )
}
