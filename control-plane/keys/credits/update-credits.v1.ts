import { Type } from 'typebox'
import { StringEnum } from '../../../shared/http/schema-docs.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import { v1Route } from '../../http/management-route.js'
import { KeyIdField } from '../../wire/fields.js'
import { updateCredits } from './update-credits.js'

const UpdateRemainingBody = Type.Object(
  {
    keyId: KeyIdField('The key whose credits to change: the `keyId` that keys.createKey returned'),
    op: StringEnum(['increment', 'decrement', 'set'], {
      description:
        'Add `value`, take it away (stopping at 0), or set the balance to it (which gives a key without credits some)',
    }),
    value: Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000_000_000, examples: [100] }), Type.Null()], {
      description: 'Credits; null with `set` takes the credits away (no limit, no refill)',
    }),
  },
  { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId, op: 'set', value: 100 }] },
)
const UpdateRemainingResponse = Type.Object({
  remaining: Type.Optional(Type.Integer({ description: 'The balance now; absent: no credits, no limit' })),
})

/** v1's keys.updateRemaining: the balance alone, in Unkey v1's words. */
export const updateRemainingV1 = v1Route({
  operation: 'keys.updateRemaining',
  method: 'POST',
  doc: { summary: "Set, increment or decrement a key's credits", tag: 'keys' },
  input: UpdateRemainingBody,
  answer: UpdateRemainingResponse,
  handle: async (body, caller, deps) => {
    const { remaining } = await updateCredits(deps, caller, body)
    return { remaining: remaining ?? undefined }
  },
})
