import type { KeygateServer } from '../../shared/http/build-server.js'
import type { KeyPatch, KeyRecord } from '../../shared/records.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import type { RecordRef } from '../rbac.js'
import { allowKeyGrants, takesAway } from '../key-grants.js'
import { checkExpires } from '../expires.js'
import { checkRefill, withRefillDay } from '../refill-rules.js'
import { rateLimitOf } from '../rate-limit-body.js'
import { checkMeta } from '../meta-limits.js'
import { bindIdentity } from '../identity-binding.js'
import { checkDefaultLimit, namedLimitsOf } from '../named-limits.js'
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
      // 404 and 403 before any permission or role named is looked up (or created).
      const current = await writes.readKey(body.keyId)
      requirePermission(principal, current.apiId, 'update_key')
      const checkContent = (record: KeyRecord) => {
        checkMeta(body.meta)
        checkDefaultLimit(
          body.ratelimit === undefined ? record.ratelimit : body.ratelimit,
          body.ratelimits === undefined ? record.ratelimits : body.ratelimits,
        )
        checkExpires(body.expires, deps.clock.now(), { pastAllowed: true })
        checkRefill(
          body.refill,
          body.remaining === undefined ? record.remaining !== undefined : body.remaining !== null,
        )
      }
      // The content too, before anything (a permission, a role, an identity) is created for a call refused anyway.
      checkContent(current)
      // Unkey's: changing a key's permissions or roles needs the rbac actions for it, as keys.addPermissions does
      // (checked before anything named is created; taking some away also needs the remove action, checked below).
      if (body.permissions?.length) allowKeyGrants(principal, 'permissions', true, false)
      if (body.roles?.length) allowKeyGrants(principal, 'roles', true, false)
      const patch: KeyPatch = {
        name: body.name,
        ownerId: ownerIdOf(body),
        meta: body.meta,
        expires: body.expires,
        remaining: body.remaining,
        refill: withRefillDay(body.refill),
        ratelimit: rateLimitOf(body.ratelimit),
        ratelimits: body.ratelimits && namedLimitsOf(body.ratelimits),
        // A bare name is created when missing, as keys.createKey does; Unkey's {name} only with `create: true`.
        permissionIds:
          body.permissions && (await deps.rbac.permissionIdsOf(body.permissions.map(named), principal, false)),
        roleIds: body.roles && (await deps.rbac.roleIdsOf(body.roles.map(named), principal, false)),
        enabled: body.enabled,
      }
      if (patch.permissionIds && takesAway(current.permissionIds, patch.permissionIds)) {
        allowKeyGrants(principal, 'permissions', false, true)
      }
      if (patch.roleIds && takesAway(current.roleIds, patch.roleIds)) allowKeyGrants(principal, 'roles', false, true)
      if (typeof patch.ownerId === 'string') await bindIdentity(deps, request, patch.ownerId)
      // 404, then 403, then the content: a root key without rights on the key learns nothing more.
      let before: KeyRecord | undefined
      const write = await writes.updateKey(body.keyId, patch, (record) => {
        before = record
        requirePermission(principal, record.apiId, 'update_key')
        checkContent(record)
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

function named(ref: string | RecordRef): RecordRef {
  return typeof ref === 'string' ? { name: ref, create: true } : ref
}
