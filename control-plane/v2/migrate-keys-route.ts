import { ApiError, invalid, notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { registerV2 } from '../../shared/http/v2-route.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { bindIdentity, checkIdentityBinding } from '../identity-binding.js'
import { checkImportedHash, importEach, type ImportItem } from '../key-import.js'
import type { KeyWrites } from '../key-writes.js'
import { newKeyRecord } from '../new-key-record.js'
import { principalOf, requirePermission, callerOf } from '../root-key-auth.js'
import { MigrateKeysBody, MigrateKeysData, type MigratedKey } from './migrate-keys-schemas.js'

/**
 * v2's keys.migrateKeys: keys that exist elsewhere, by hash, into one api. Each key is stored, or answered in
 * `failed` when its hash is taken; everything else about the call (fields, api, the root key's rights, including
 * making missing permissions and roles) is checked before anything is written and fails the whole call, as
 * migrations.createKeys does (key-import.ts).
 */
export function registerV2MigrateKeys(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  registerV2(app, 'keys.migrateKeys', { body: MigrateKeysBody, data: MigrateKeysData }, async (request) => {
    const principal = principalOf(request)
    const { migrationId, apiId, keys } = request.body
    requirePermission(principal, apiId, 'create_key')
    if (!(await deps.store.keys.getApi(apiId))) throw notFound('api', `api ${apiId} not found`)
    const now = deps.clock.now()
    const items = keys.map((key, i): ImportItem => {
      checkImportedHash(key.hash, `keys.${i}.hash`)
      const item = { fields: fieldsOf(apiId, key), material: { hash: key.hash, start: '' } }
      try {
        newKeyRecord(item.fields, item.material, now)
      } catch (err) {
        throw located(err, `keys.${i}`)
      }
      return item
    })
    for (const externalId of new Set(items.flatMap((item) => item.fields.externalId ?? [])))
      await checkIdentityBinding(deps, principal, externalId)
    const outcomes = await importEach(deps, writes, items, principal)
    const written = outcomes.flatMap((record) => (record ? [record] : []))
    // As keys.createKey: every externalId migrated gets its identity (Unkey's upsert). An identity made by another
    // call since the check is bound only if the root key may read it; refused, the keys it migrated go.
    try {
      for (const externalId of new Set(written.flatMap((record) => (record.ownerId ? [record.ownerId] : []))))
        await bindIdentity(deps, callerOf(request), externalId)
    } catch (err) {
      for (const record of written) await writes.deleteKey(record.id).catch(() => {})
      throw err
    }
    request.log.info(
      { apiId, migrated: written.length, failed: outcomes.length - written.length, rootKeyId: principal.rootKeyId },
      'keys migrated',
    )
    for (const record of written) {
      await deps.audit.record(callerOf(request), 'keys.migrateKeys', {
        apiId,
        keyId: record.id,
        after: record,
        context: { migrationId },
      })
    }
    return {
      data: {
        migrated: outcomes.flatMap((record, i) => (record ? [{ hash: keys[i]!.hash, keyId: record.id }] : [])),
        failed: outcomes.flatMap((record, i) => (record ? [] : [keys[i]!.hash])),
      },
    }
  })
}

/** A v2 key as the fields keys.createKey takes (v1's names: `remaining`, `refill`). */
function fieldsOf(apiId: string, key: MigratedKey): ImportItem['fields'] {
  return {
    apiId,
    name: key.name,
    externalId: key.externalId,
    meta: key.meta,
    expires: key.expires,
    enabled: key.enabled,
    remaining: key.credits?.remaining ?? undefined,
    refill: key.credits?.refill,
    ratelimits: key.ratelimits?.map(({ name, limit, duration, autoApply }) => ({
      name,
      limit,
      duration,
      ...(autoApply !== undefined ? { autoApply } : {}),
    })),
    permissions: key.permissions,
    roles: key.roles,
  }
}

// The fields whose v2 names differ from those newKeyRecord's messages use.
const V2_FIELDS: Record<string, string> = { remaining: 'credits.remaining', refill: 'credits.refill' }

/**
 * newKeyRecord's 400 about a field (`refill: …`) as one about the key's (`keys.3.credits.refill: …`), and one about
 * the request as a whole as one about the key (`keys.3: …`), so that v2's `errors` locate it.
 */
function located(err: unknown, at: string): unknown {
  if (!(err instanceof ApiError) || (err.code !== 'BAD_REQUEST' && !err.details?.inputRule)) return err
  const field = err.details?.fields?.[0]
  if (field === undefined || field.location === 'body') return invalid(at, err.message)
  const [name, ...rest] = field.location.slice('body.'.length).split('.')
  return invalid([at, V2_FIELDS[name!] ?? name, ...rest].join('.'), field.message)
}
