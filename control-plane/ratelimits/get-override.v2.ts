import { v2Route } from '../http/management-route.js'
import { OverrideRef, overrideData, V2Override } from './wire/ratelimit-schemas.v2.js'
import { getOverride } from './get-override.js'

/** v2's ratelimit.getOverride: the override applied to the identifier, its own or a pattern's. */
export const getOverrideV2 = v2Route({
  operation: 'ratelimit.getOverride',
  doc: { summary: "Read an identifier's override", tag: 'v2 ratelimit' },
  body: OverrideRef,
  data: V2Override,
  handle: async ({ namespace, identifier }, caller, deps) => {
    const input = { namespace: { nameOrId: namespace }, identifier, match: 'applied' } as const
    return { data: overrideData(await getOverride(deps, caller, input)) }
  },
})
