import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { principalOf, requireAction } from '../root-key-auth.js'

const MAX_PAGE = 100

const Query = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: MAX_PAGE, description: 'Namespaces per page, 1–100' }),
  ),
  cursor: Type.Optional(
    Type.String({
      maxLength: 256,
      description: "The previous page's `cursor`, for the page after it; leave out for the first page",
    }),
  ),
})

const ListedNamespace = Type.Object({
  id: Type.String({ description: "The namespace's id (`namespaceId` in the override calls)" }),
  name: Type.String({ description: 'Its name (`namespace` in ratelimits.limit, `namespaceName` elsewhere)' }),
  createdAt: Type.Number({ description: 'When it was made (by its first use), unix milliseconds' }),
})

/**
 * GET /v1/ratelimits.listNamespaces (Keygate's own, for the console): every namespace, oldest first, for a root key
 * that may read them all (`ratelimit.*.read_namespace`).
 */
export function registerListNamespaces(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/ratelimits.listNamespaces',
    {
      schema: {
        querystring: Query,
        response: {
          200: Type.Object({
            namespaces: Type.Array(ListedNamespace, { description: 'This page of namespaces, oldest first' }),
            cursor: Type.Optional(
              Type.String({ description: 'Pass it as `cursor` for the next page; absent on the last page' }),
            ),
          }),
        },
      },
    },
    async (request) => {
      requireAction(principalOf(request), 'ratelimit', '*', 'read_namespace')
      const { cursor, limit = MAX_PAGE } = request.query
      const page = await deps.namespaces.list({ cursor: cursor || undefined, limit })
      return {
        namespaces: page.records.map(({ id, name, createdAt }) => ({ id, name, createdAt })),
        cursor: page.cursor,
      }
    },
  )
}
