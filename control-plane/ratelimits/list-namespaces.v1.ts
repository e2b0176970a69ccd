import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { listNamespaces } from './list-namespaces.js'

const MAX_PAGE = 100

const ListNamespacesQuery = Type.Object({
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

const ListNamespacesResponse = Type.Object({
  namespaces: Type.Array(ListedNamespace, { description: 'This page of namespaces, oldest first' }),
  cursor: Type.Optional(Type.String({ description: 'Pass it as `cursor` for the next page; absent on the last page' })),
})

/** v1's ratelimits.listNamespaces (Keygate's own, for the console): a GET. */
export const listNamespacesV1 = v1Route({
  operation: 'ratelimits.listNamespaces',
  method: 'GET',
  doc: {
    summary: 'List every rate-limit namespace, a page at a time',
    description:
      "Keygate's own (Unkey v1 has no way to list namespaces): every namespace, oldest first, for a root key with `ratelimit.*.read_namespace`. A namespace is made by its first use (ratelimits.limit, ratelimits.setOverride).",
    tag: 'ratelimits',
  },
  input: ListNamespacesQuery,
  answer: ListNamespacesResponse,
  handle: async ({ cursor, limit = MAX_PAGE }, caller, deps) => {
    const page = await listNamespaces(deps, caller, { cursor: cursor || undefined, limit })
    return { namespaces: page.records.map(({ id, name, createdAt }) => ({ id, name, createdAt })), cursor: page.cursor }
  },
})
