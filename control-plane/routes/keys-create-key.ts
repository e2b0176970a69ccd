import { notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/key-material.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { checkExpires } from '../expires.js'
import { checkRefill } from '../refill-rules.js'
import { rateLimitOf } from '../rate-limit-body.js'
import { checkMeta } from '../meta-limits.js'
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
      checkMeta(body.meta)
      checkExpires(body.expires, deps.clock.now())
      checkRefill(body.refill, body.remaining !== undefined)
      const ownerId = ownerIdOf(body) ?? undefined
      if (!(await deps.store.getApi(body.apiId))) throw notFound(`api ${body.apiId} not found`)
      // Unkey creates the permissions and roles named that do not exist yet, if the root key may.
      const permissionIds = body.permissions?.length
        ? await deps.rbac.permissionIdsOf(body.permissions, principal, true)
        : undefined
      const roleIds = body.roles?.length ? await deps.rbac.roleIdsOf(body.roles, principal, true) : undefined

      const now = deps.clock.now()
      const { key, hash, start } = generateKey(body.prefix, body.byteLength)
      const write = await writes.createKey({
        id: newId('key', now),
        hash,
        start,
        apiId: body.apiId,
        name: body.name,
        ownerId,
        meta: body.meta,
        expires: body.expires,
        permissionIds,
        roleIds,
        remaining: body.remaining,
        refill: body.refill,
        ratelimit: rateLimitOf(body.ratelimit) ?? undefined,
        environment: body.environment,
        enabled: body.enabled ?? true,
        createdAt: now,
      })
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
