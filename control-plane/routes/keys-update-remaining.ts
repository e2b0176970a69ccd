import { Type } from 'typebox'
import { lastRefillBoundary } from '../../shared/credits.js'
import { ApiError, notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { principalOf, requirePermission } from '../root-key-auth.js'
import { KeyIdField } from '../schemas/fields.js'
import { StringEnum } from '../../shared/http/schema-docs.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'

const Body = Type.Object(
  {
    keyId: KeyIdField(
      'A key that carries credits (created with `remaining`): the `keyId` that keys.createKey returned',
    ),
    op: StringEnum(['increment', 'decrement', 'set'], {
      description: 'Add `value`, take it away (stopping at 0), or set the balance to it',
    }),
    value: Type.Integer({ minimum: 0, maximum: 1_000_000_000_000, description: 'Credits', examples: [100] }),
  },
  { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId, op: 'set', value: 100 }] },
)

/**
 * Changes a key's credit balance atomically (decrement stops at 0, the total at 1e12), after any refill that
 * is due, so the refill can never undo it later. A key without credits: 412, use updateKey.
 */
export function registerUpdateRemaining(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post(
    '/v1/keys.updateRemaining',
    {
      schema: {
        body: Body,
        response: { 200: Type.Object({ remaining: Type.Integer({ description: 'The balance now' }) }) },
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
      const remaining = await deps.store.updateCredits(keyId, op, value, refill, now)
      if (remaining === null) {
        throw new ApiError(
          'PRECONDITION_FAILED',
          'the key carries no credits; give it some with keys.updateKey {remaining}',
        )
      }
      request.log.info({ keyId, op, value, remaining, rootKeyId: principal.rootKeyId }, 'key credits updated')
      await deps.audit.record(request, 'keys.updateRemaining', {
        apiId: record.apiId,
        keyId,
        before: { remaining: record.remaining },
        after: { op, value, remaining },
      })
      return { remaining }
    },
  )
}
