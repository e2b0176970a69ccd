import { Type } from 'typebox'
import { ApiError, invalid } from '../../../shared/errors/errors.js'
import { StringEnum } from '../../../shared/http/schema-docs.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import { v2Route } from '../../http/management-route.js'
import { withRefillDay } from '../key-fields.js'
import { KeyIdField } from '../../wire/fields.js'
import { Nullable, Remaining } from '../wire/key-bodies.v2.js'
import { CreditsData } from '../wire/key-data.v2.js'
import { updateCredits } from './update-credits.js'

const UpdateCreditsBody = Type.Object(
  {
    keyId: KeyIdField('The key whose credits to change: the `keyId` that keys.createKey returned'),
    operation: StringEnum(['set', 'increment', 'decrement'], {
      description: 'Set the balance to `value`, add it, or take it away (stopping at 0)',
    }),
    value: Type.Optional(
      Nullable(Remaining, 'Credits; with `set`, null (or none) takes the credits away: no limit, no refill'),
    ),
  },
  { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId, operation: 'set', value: 100 }] },
)

/** v2's keys.updateCredits: the change is called `operation`, `value` may be left out (null). */
export const updateCreditsV2 = v2Route({
  operation: 'keys.updateCredits',
  doc: { summary: "Set, increment or decrement a key's credits (`set` with `null`: no credit limit)", tag: 'v2 keys' },
  body: UpdateCreditsBody,
  data: CreditsData,
  handle: async ({ keyId, operation, value }, caller, deps) => {
    const change = { keyId, op: operation, value: value ?? null }
    const { before, remaining } = await updateCredits(deps, caller, change).catch(inV2Names)
    // Taking the credits away (null) takes their refill and low threshold with them.
    if (remaining === null) return { data: { remaining } }
    return { data: { remaining, refill: withRefillDay(before.refill), lowThreshold: before.creditsLowThreshold } }
  },
})

/** Throws `err`; the operation's 400 about its `op` as one about v2's name for it, `operation`. */
function inV2Names(err: unknown): never {
  const field = err instanceof ApiError ? err.details?.fields?.[0] : undefined
  throw field?.location === 'body.op' ? invalid('operation', field.message) : err
}
