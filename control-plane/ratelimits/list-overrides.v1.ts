import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { NamespaceFields, namespaceRefOf, OverrideResponse, overrideResponseOf } from './wire/ratelimit-schemas.js'
import { listOverrides } from './list-overrides.js'

const ListOverridesQuery = Type.Object({
  ...NamespaceFields,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Overrides per page (default 100)' })),
  cursor: Type.Optional(
    Type.String({ maxLength: 512, description: 'Where the next page starts: the `cursor` of the previous answer' }),
  ),
})

const ListOverridesResponse = Type.Object({
  overrides: Type.Array(OverrideResponse, { description: 'A page of the namespace’s overrides, oldest first' }),
  total: Type.Integer({ description: 'How many overrides the namespace has' }),
  cursor: Type.Optional(Type.String({ description: 'Present when there may be more: pass it to get the next page' })),
})

/** v1's ratelimits.listOverrides: a GET, 100 a page unless asked, with the namespace's `total`. */
export const listOverridesV1 = v1Route({
  operation: 'ratelimits.listOverrides',
  method: 'GET',
  doc: { summary: "List a namespace's overrides, a page at a time", tag: 'ratelimits' },
  input: ListOverridesQuery,
  answer: ListOverridesResponse,
  handle: async ({ cursor, limit, ...named }, caller, deps) => {
    const namespace = namespaceRefOf(named)
    const page = await listOverrides(deps, caller, { namespace, cursor, limit: limit ?? 100, paging: 'counted' })
    return { overrides: page.overrides.map(overrideResponseOf), total: page.total, cursor: page.cursor }
  },
})
