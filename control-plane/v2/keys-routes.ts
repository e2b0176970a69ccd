import { notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { registerV2 } from '../../shared/http/v2-route.js'
import { hashKey } from '../../shared/key-material.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { updateCredits } from '../key-credits.js'
import { rerollKey } from '../key-reroll.js'
import { updateKey, type KeyChanges } from '../key-update.js'
import type { KeyWrites } from '../key-writes.js'
import type { Rbac } from '../rbac.js'
import { withRefillDay } from '../refill-rules.js'
import { can, principalOf, requireKeyPermission, type Principal, callerOf } from '../root-key-auth.js'
import { EmptyResponse } from '../schemas/key-schemas.js'
import { checkCredits } from './credit-rules.js'
import {
  RerollKeyBody,
  UpdateCreditsBody,
  UpdateKeyBody,
  WhoamiBody,
} from './key-bodies.js'
import { CreditsData, KeyData, NewKeyData, toKeyData } from './key-data.js'

/**
 * v2's keys.updateKey, whoami, rerollKey and updateCredits (Unkey's V2Keys* schemas)
 * over the operations v1 uses (key-update.ts, key-reroll.ts, key-credits.ts): a key made through one
 * format verifies and reads through the other.
 */
export function registerV2KeyRoutes(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  registerV2(app, 'keys.updateKey', { body: UpdateKeyBody, data: EmptyResponse }, async (request) => {
    const { keyId, credits, ratelimits, permissions, roles, ...rest } = request.body
    // 404 and 403 before v2's own checks, which name its fields (the operation checks again as it writes).
    const current = await writes.readKey(keyId)
    requireKeyPermission(principalOf(request), current, 'update_key')
    checkCredits(credits, current.remaining !== undefined)
    const changes: KeyChanges = { ...rest }
    if (credits === null) changes.remaining = null
    if (credits?.remaining !== undefined) changes.remaining = credits.remaining
    if (credits?.refill !== undefined) changes.refill = credits.refill
    // v1's single limit is the named limit `default` in v2's terms: a new list replaces it too.
    if (ratelimits !== undefined) {
      changes.ratelimits = ratelimits
      changes.ratelimit = null
    }
    await updateKey(deps, writes, callerOf(request), keyId, changes, {
      resolve: (_current, principal) => grantsByName(deps.rbac, { permissions, roles }, principal),
    })
    return { data: {} }
  })

  registerV2(app, 'keys.whoami', { body: WhoamiBody, data: KeyData }, async (request) => {
    const record = await deps.store.keys.getKeyByHash(hashKey(request.body.key))
    // As Unkey's: to a root key that may not read it, the key does not exist (its existence stays hidden).
    if (!record || !can(principalOf(request), record.apiId, 'read_key')) throw notFound('key', 'key not found')
    return { data: toKeyData(record, await deps.rbac.contextOf(record)) }
  })

  registerV2(app, 'keys.rerollKey', { body: RerollKeyBody, data: NewKeyData }, async (request) => {
    const { keyId, expiration } = request.body
    // Unkey's v2 asks create_key only (v1's rerollKey also update_key). Credits move to the new key, as in v1.
    return { data: await rerollKey(deps, writes, callerOf(request), { keyId, expiration }, ['create_key']) }
  })

  registerV2(app, 'keys.updateCredits', { body: UpdateCreditsBody, data: CreditsData }, async (request) => {
    const { keyId, operation, value } = request.body
    const change = { keyId, op: operation, value: value ?? null }
    const { before, remaining } = await updateCredits(deps, writes, callerOf(request), change, 'operation')
    // Taking the credits away (null) takes their refill with them.
    return { data: { remaining, refill: remaining === null ? undefined : withRefillDay(before.refill) } }
  })
}

/**
 * Unkey v2's rule for the names a key is given: each role must exist (404), a permission slug with none is made
 * (with no rbac permission asked). Roles first, so that nothing is made for a call refused for a role.
 */
async function grantsByName(rbac: Rbac, names: { permissions?: string[]; roles?: string[] }, principal: Principal) {
  const roleIds = names.roles && (await rbac.roleIdsOf(names.roles, principal, false))
  const permissionIds = names.permissions && (await rbac.permissionIdsOf(names.permissions, principal, 'by-operation'))
  return { permissionIds, roleIds }
}

