import type { KeygateServer } from '../../shared/http/build-server.js'
import type { KeyPatch, KeyRecord } from '../../shared/records.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { checkExpires } from '../expires.js'
import { checkRefill } from '../refill-rules.js'
import { rateLimitOf } from '../rate-limit-body.js'
import { checkMeta } from '../meta-limits.js'
import { ownerIdOf } from '../v1-field-rules.js'
import { principalOf, requirePermission } from '../root-key-auth.js'
import { EmptyResponse, UpdateKeyBody } from '../schemas/key-schemas.js'

export function registerUpdateKey(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  app.post(
    '/v1/keys.updateKey',
    { schema: { body: UpdateKeyBody, response: { 200: EmptyResponse } } },
    async (request) => {
      const principal = principalOf(request)
      const body = request.body
      const patch: KeyPatch = {
        name: body.name,
        ownerId: ownerIdOf(body),
        meta: body.meta,
        expires: body.expires,
        remaining: body.remaining,
        refill: body.refill,
        ratelimit: rateLimitOf(body.ratelimit),
        permissions: body.permissions,
        roles: body.roles,
        enabled: body.enabled,
      }
      // 404, then 403, then the content: a root key without rights on the key learns nothing more.
      let before: KeyRecord | undefined
      const write = await writes.updateKey(body.keyId, patch, (record) => {
        before = record
        requirePermission(principal, record.apiId, 'update_key')
        checkMeta(body.meta)
        checkExpires(body.expires, deps.clock.now())
        checkRefill(
          body.refill,
          body.remaining === undefined ? record.remaining !== undefined : body.remaining !== null,
        )
      })
      request.log.info(
        { keyId: body.keyId, rev: write.record.rev, enabled: write.record.enabled, rootKeyId: principal.rootKeyId },
        'key updated',
      )
      await deps.audit.record(request, 'keys.updateKey', {
        apiId: write.record.apiId,
        keyId: body.keyId,
        before,
        after: write.record,
      })
      return {}
    },
  )
}
