import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { createKey } from '../keys.js'
import { CreateKeyBody, NewKeyResponse } from '../schemas/key-schemas.js'
import { callerOf } from '../root-key-auth.js'

export function registerCreateKey(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  app.post(
    '/v1/keys.createKey',
    {
      schema: { body: CreateKeyBody, response: { 200: NewKeyResponse } },
    },
    async (request) => createKey(deps, writes, callerOf(request), request.body),
  )
}
