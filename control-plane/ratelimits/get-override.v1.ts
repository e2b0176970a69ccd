import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import {
  Identifier,
  NamespaceFields,
  namespaceRefOf,
  OVERRIDDEN,
  OverrideResponse,
  overrideResponseOf,
} from './wire/ratelimit-schemas.js'
import { getOverride } from './get-override.js'

/** v1's ratelimits.getOverride: a GET; the identifier's own override (a pattern is read by naming it). */
export const getOverrideV1 = v1Route({
  operation: 'ratelimits.getOverride',
  method: 'GET',
  doc: { summary: "Read an identifier's override", tag: 'ratelimits' },
  input: Type.Object({ ...NamespaceFields, identifier: Identifier(OVERRIDDEN) }),
  answer: OverrideResponse,
  handle: async ({ identifier, ...named }, caller, deps) =>
    overrideResponseOf(await getOverride(deps, caller, { namespace: namespaceRefOf(named), identifier, match: 'own' })),
})
