import { Type } from 'typebox'
import { v2Route } from '../http/management-route.js'
import { OverrideRef } from './wire/ratelimit-schemas.v2.js'
import { deleteOverride } from './delete-override.js'

/** v2's ratelimit.deleteOverride: the namespace by name or by id. */
export const deleteOverrideV2 = v2Route({
  operation: 'ratelimit.deleteOverride',
  doc: { summary: "Delete an identifier's override: calls get the limit they send again", tag: 'v2 ratelimit' },
  body: OverrideRef,
  data: Type.Object({}, { additionalProperties: false }),
  handle: async ({ namespace, identifier }, caller, deps) => {
    await deleteOverride(deps, caller, { namespace: { nameOrId: namespace }, identifier })
    return { data: {} }
  },
})
