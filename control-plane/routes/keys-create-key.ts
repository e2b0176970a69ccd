import { notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { generateKey } from '../../shared/key-material.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { newKeyGrants, newKeyRecord } from '../new-key-record.js'
import { bindIdentity } from '../identity-binding.js'
import { notRecoverable, ownerIdOf } from '../v1-field-rules.js'
import { principalOf, requirePermission } from '../root-key-auth.js'
import { CreateKeyBody, NewKeyResponse } from '../schemas/key-schemas.js'

export function registerCreateKey(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  app.post(
    '/v1/keys.createKey',
    {
      schema: { body: CreateKeyBody, response: { 200: NewKeyResponse } },
    },
    async (request) => {
      const principal = principalOf(request)
      const body = request.body
      requirePermission(principal, body.apiId, 'create_key')
      if (body.recoverable) throw notRecoverable()
      const { key, ...material } = generateKey(body.prefix, body.byteLength)
      // The fields are checked before anything (a permission or role) is created for them.
      newKeyRecord(body, material, deps.clock.now())
      if (!(await deps.store.getApi(body.apiId))) throw notFound(`api ${body.apiId} not found`)
      const grants = await newKeyGrants(body, deps.rbac, principal)
      const record = newKeyRecord(body, material, deps.clock.now(), grants)
      const ownerId = ownerIdOf(body) ?? undefined
      if (ownerId !== undefined) await bindIdentity(deps, request, ownerId)

      const write = await writes.createKey(record)
      request.log.info({ keyId: write.record.id, apiId: body.apiId, rootKeyId: principal.rootKeyId }, 'key created')
      await deps.audit.record(request, 'keys.createKey', {
        apiId: body.apiId,
        keyId: write.record.id,
        after: write.record,
      })
      return { keyId: write.record.id, key }
    },
  )
}
