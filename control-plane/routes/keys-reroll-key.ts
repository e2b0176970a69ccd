import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { KEY_PREFIX_PATTERN } from '../../shared/key-material.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { KeyIdField } from '../schemas/fields.js'
import { NewKeyResponse } from '../schemas/key-schemas.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { rerollKey } from '../key-reroll.js'
import { callerOf } from '../root-key-auth.js'

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

/** Rotation (beyond Unkey v1): key-reroll.ts. */
export function registerRerollKey(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  app.post(
    '/v1/keys.rerollKey',
    {
      schema: { body: Body, response: { 200: NewKeyResponse } },
    },
    async (request) => rerollKey(deps, writes, callerOf(request), request.body, ['create_key', 'update_key']),
  )
}
