import { Type } from 'typebox'
import { lastRefillBoundary } from '../../shared/credits.js'
import { badRequest, notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { principalOf, requirePermission } from '../root-key-auth.js'
import { KeyIdField } from '../schemas/fields.js'
import { StringEnum } from '../../shared/http/schema-docs.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'

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

/**
 * Changes a key's credit balance atomically (decrement stops at 0, the total at 1e12), after any refill that
 * is due, so the refill can never undo it later. As in Unkey v1, `set` also gives credits to a key without
 * them (or, with null, takes them away): that changes the key's record, so it is a write verifiers hear of.
 */
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
      const principal = principalOf(request)
      const { keyId, op, value } = request.body
      const record = await deps.store.getKeyById(keyId)
      if (!record) throw notFound(`key ${keyId} not found`)
      requirePermission(principal, record.apiId, 'update_key')
      const now = deps.clock.now()
      const refill = record.refill && { boundary: lastRefillBoundary(record.refill, now), amount: record.refill.amount }
      // null: the key carries no credits (or value is null), so the balance alone cannot change.
      let remaining = value === null ? null : await deps.store.updateCredits(keyId, op, value, refill, now)
      if (remaining === null) {
        if (op !== 'set') {
          throw badRequest(
            value === null
              ? `value: cannot ${op} by null`
              : `op: the key carries no credits (no limit) to ${op}; 'set' a value instead`,
          )
        }
        await writes.updateKey(keyId, { remaining: value }, (current) =>
          requirePermission(principal, current.apiId, 'update_key'),
        )
        remaining = value
      }
      request.log.info({ keyId, op, value, remaining, rootKeyId: principal.rootKeyId }, 'key credits updated')
      await deps.audit.record(request, 'keys.updateRemaining', {
        apiId: record.apiId,
        keyId,
        before: { remaining: record.remaining },
        after: { op, value, remaining },
      })
      return { remaining: remaining ?? undefined }
    },
  )
}
