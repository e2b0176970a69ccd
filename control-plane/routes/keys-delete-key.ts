import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { deleteKey } from '../keys.js'
import { EmptyResponse } from '../schemas/key-schemas.js'
import { KeyIdField, PermanentField } from '../schemas/fields.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { callerOf } from '../root-key-auth.js'

const Body = Type.Object(
  { keyId: KeyIdField('The key to delete: the `keyId` that keys.createKey returned'), permanent: PermanentField() },
  { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId }] },
)

export function registerDeleteKey(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  // `permanent` is accepted for Unkey compatibility; Keygate always removes the record (only its hash existed).
  app.post('/v1/keys.deleteKey', { schema: { body: Body, response: { 200: EmptyResponse } } }, async (request) => {
    await deleteKey(deps, writes, callerOf(request), request.body.keyId)
    return {}
  })
}
