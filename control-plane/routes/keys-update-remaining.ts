import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { updateCredits } from '../key-credits.js'
import { KeyIdField } from '../schemas/fields.js'
import { StringEnum } from '../../shared/http/schema-docs.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { callerOf } from '../root-key-auth.js'

const Body = Type.Object(
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

/** The balance alone, in Unkey v1's words (key-credits.ts). */
export function registerUpdateRemaining(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  app.post(
    '/v1/keys.updateRemaining',
    {
      schema: {
        body: Body,
        response: {
          200: Type.Object({
            remaining: Type.Optional(Type.Integer({ description: 'The balance now; absent: no credits, no limit' })),
          }),
        },
      },
    },
    async (request) => {
      const { remaining } = await updateCredits(deps, writes, callerOf(request), request.body)
      return { remaining: remaining ?? undefined }
    },
  )
}
