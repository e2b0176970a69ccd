import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { newId } from '../../shared/ids.js'
import { lastRefillBoundary } from '../../shared/credits.js'
import { generateKey, KEY_PREFIX_PATTERN } from '../../shared/key-material.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { KeyIdField } from '../schemas/fields.js'
import { NewKeyResponse } from '../schemas/key-schemas.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { principalOf, requirePermission } from '../root-key-auth.js'

const Body = Type.Object(
  {
    keyId: KeyIdField('The key to replace: the `keyId` that keys.createKey returned'),
    expiration: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 30 * 24 * 3_600_000,
        description:
          'Grace period: the old key keeps working this many milliseconds (default 0: it stops at once; at most 30 days)',
        examples: [60_000],
      }),
    ),
    prefix: Type.Optional(
      Type.String({
        pattern: KEY_PREFIX_PATTERN,
        description: "The new key's prefix, 1–16 letters or digits (default: the old key's)",
      }),
    ),
  },
  { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId, expiration: 60_000 }] },
)

/**
 * Rotation (beyond Unkey v1): a new key with the same settings, and the old one expiring after the grace
 * period. The new key is created first, so a failure half-way never leaves the caller with no working key.
 */
export function registerRerollKey(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  app.post(
    '/v1/keys.rerollKey',
    {
      schema: { body: Body, response: { 200: NewKeyResponse } },
    },
    async (request) => {
      const principal = principalOf(request)
      const { keyId, expiration = 0 } = request.body
      const old = await writes.readKey(keyId)
      requirePermission(principal, old.apiId, 'create_key', 'update_key')
      const now = deps.clock.now()
      const prefix =
        request.body.prefix ?? (old.start.includes('_') ? old.start.slice(0, old.start.indexOf('_')) : undefined)
      const { key, hash, start } = generateKey(prefix, 16)
      const { rev: _rev, id: _id, hash: _hash, start: _start, updatedAt: _updated, remaining, ...settings } = old
      // Credits move, they are not copied: the new key starts empty and takes the old key's balance (the old
      // key then has none left for its grace period; a failure in between loses what was being moved).
      const created = await writes.createKey({
        ...settings,
        ...(remaining === undefined ? {} : { remaining: 0 }),
        id: newId('key', now),
        hash,
        start,
        createdAt: now,
      })
      if (remaining !== undefined) {
        const refill = old.refill && { boundary: lastRefillBoundary(old.refill, now), amount: old.refill.amount }
        const taken = await deps.store.updateCredits(keyId, 'take', 0, refill, now)
        if (taken !== null && taken > 0)
          await deps.store.updateCredits(created.record.id, 'increment', taken, undefined, now)
      }
      const graceEnds = now + expiration
      await writes.updateKey(
        keyId,
        (current) => ({
          expires: current.expires !== undefined && current.expires < graceEnds ? current.expires : graceEnds,
        }),
        () => {},
      )
      request.log.info(
        { keyId, newKeyId: created.record.id, graceMs: expiration, rootKeyId: principal.rootKeyId },
        'key rerolled',
      )
      await deps.audit.record(request, 'keys.rerollKey', {
        apiId: old.apiId,
        keyId,
        before: old,
        after: { newKeyId: created.record.id, oldKeyExpires: now + expiration },
      })
      return { keyId: created.record.id, key }
    },
  )
}
