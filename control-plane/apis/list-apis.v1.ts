import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { listApis } from './list-apis.js'

const MAX_PAGE = 100

const ListApisQuery = Type.Object({
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

/** v1's apis.listApis, a GET: Keygate's own (Unkey's v1 has no way to list apis, and the console needs one). */
export const listApisV1 = v1Route({
  operation: 'apis.listApis',
  method: 'GET',
  doc: {
    summary: 'List every api, a page at a time',
    description:
      "Keygate's own (Unkey v1 has no way to list apis): every api, oldest first, for a root key with `api.*.read_api`.",
    tag: 'apis',
  },
  input: ListApisQuery,
  answer: Type.Object({
    apis: Type.Array(ListedApi, { description: 'This page of apis, oldest first' }),
    cursor: Type.Optional(
      Type.String({ description: 'Pass it as `cursor` for the next page; absent on the last page' }),
    ),
  }),
  handle: async ({ cursor, limit = MAX_PAGE }, caller, deps) => {
    const page = await listApis(deps, caller, { cursor: cursor || undefined, limit })
    return { apis: page.records.map(({ id, name, createdAt }) => ({ id, name, createdAt })), cursor: page.cursor }
  },
})
