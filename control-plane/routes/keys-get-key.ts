import { Type } from 'typebox'
import { fieldError } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { toKeyResponse } from '../key-response.js'
import { readKey } from '../keys.js'
import { KeyResponse } from '../schemas/key-schemas.js'
import { DecryptField, KeyIdField } from '../schemas/fields.js'
import { callerOf } from '../root-key-auth.js'

export function registerGetKey(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/keys.getKey',
    {
      schema: {
        querystring: Type.Object({ keyId: KeyIdField(), decrypt: DecryptField() }),
        response: { 200: KeyResponse },
      },
    },
    async (request) => {
      const { keyId, decrypt } = request.query
      if (decrypt)
        throw fieldError('PRECONDITION_FAILED', 'decrypt', 'Keygate stores only hashes; keys cannot be shown again')
      const { record, context } = await readKey(deps, callerOf(request), keyId)
      return toKeyResponse(record, context)
    },
  )
}
