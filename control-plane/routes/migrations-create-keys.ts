import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { bindIdentity, checkIdentityBinding } from '../identity-binding.js'
import { ownerIdOf } from '../v1-field-rules.js'
import { importKeys } from '../key-import.js'
import type { KeyWrites } from '../key-writes.js'
import { principalOf, requirePermission, callerOf } from '../root-key-auth.js'
import { CreateKeysBody, CreateKeysResponse } from '../schemas/migration-schemas.js'

/** Imports existing keys (from Unkey, or any store of SHA-256 hashes) without reissuing them. */
export function registerMigrationsCreateKeys(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  app.post(
    '/v1/migrations.createKeys',
    { schema: { body: CreateKeysBody, response: { 200: CreateKeysResponse } } },
    async (request) => {
      const principal = principalOf(request)
      for (const apiId of new Set(request.body.map((key) => key.apiId)))
        requirePermission(principal, apiId, 'create_key')
      for (const externalId of new Set(request.body.flatMap((key) => ownerIdOf(key) ?? [])))
        await checkIdentityBinding(deps, principal, externalId)
      const records = await importKeys(deps, writes, request.body, principal)
      // As keys.createKey: every externalId imported gets its identity (Unkey's upsert). An identity made by another
      // call since the check is bound only if the root key may read it; refused, the keys it imported go.
      try {
        for (const externalId of new Set(records.flatMap((record) => (record.ownerId ? [record.ownerId] : []))))
          await bindIdentity(deps, callerOf(request), externalId)
      } catch (err) {
        for (const record of records) await writes.deleteKey(record.id).catch(() => {})
        throw err
      }
      request.log.info({ keys: records.length, rootKeyId: principal.rootKeyId }, 'keys imported')
      for (const record of records) {
        await deps.audit.record(callerOf(request), 'migrations.createKeys', {
          apiId: record.apiId,
          keyId: record.id,
          after: record,
        })
      }
      return { keyIds: records.map((record) => record.id) }
    },
  )
}
