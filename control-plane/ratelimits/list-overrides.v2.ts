import { Type } from 'typebox'
import { v2Pagination } from '../../shared/http/v2-route.js'
import { v2Route } from '../http/management-route.js'
import { NamespaceField, overrideData, V2Override } from './wire/ratelimit-schemas.v2.js'
import { listOverrides } from './list-overrides.js'

const ListOverridesBody = Type.Object(
  {
    namespace: NamespaceField,
    cursor: Type.Optional(
      Type.String({ maxLength: 512, description: 'Where the next page starts: the previous page’s cursor' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Overrides per page (default 10)' })),
  },
  { additionalProperties: false },
)

/** v2's ratelimit.listOverrides: 10 a page unless asked; the last page carries no cursor, full or not. */
export const listOverridesV2 = v2Route({
  operation: 'ratelimit.listOverrides',
  doc: { summary: "List a namespace's overrides, a page at a time", tag: 'v2 ratelimit' },
  body: ListOverridesBody,
  data: Type.Array(V2Override, { description: 'A page of the namespace’s overrides, oldest first' }),
  paged: true,
  handle: async ({ namespace, cursor, limit }, caller, deps) => {
    const input = { namespace: { nameOrId: namespace }, cursor, limit: limit ?? 10, paging: 'exact' } as const
    const page = await listOverrides(deps, caller, input)
    return { data: page.records.map(overrideData), pagination: v2Pagination(page.cursor) }
  },
})
