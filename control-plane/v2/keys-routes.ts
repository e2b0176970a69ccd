import { notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { registerV2 } from '../../shared/http/v2-route.js'
import { hashKey } from '../../shared/key-material.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { updateCredits } from '../key-credits.js'
import type { KeyWrites } from '../key-writes.js'
import { withRefillDay } from '../refill-rules.js'
import { can, principalOf, callerOf } from '../root-key-auth.js'
import { UpdateCreditsBody, WhoamiBody } from './key-bodies.js'
import { CreditsData, KeyData, toKeyData } from './key-data.js'

/**
 * v2's keys.whoami and updateCredits (Unkey's V2Keys* schemas)
 * over the operations v1 uses (key-credits.ts): a key made through one
 * format verifies and reads through the other.
 */
export function registerV2KeyRoutes(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  registerV2(app, 'keys.whoami', { body: WhoamiBody, data: KeyData }, async (request) => {
    const record = await deps.store.keys.getKeyByHash(hashKey(request.body.key))
    // As Unkey's: to a root key that may not read it, the key does not exist (its existence stays hidden).
    if (!record || !can(principalOf(request), record.apiId, 'read_key')) throw notFound('key', 'key not found')
    return { data: toKeyData(record, await deps.rbac.contextOf(record)) }
  })

  registerV2(app, 'keys.updateCredits', { body: UpdateCreditsBody, data: CreditsData }, async (request) => {
    const { keyId, operation, value } = request.body
    const change = { keyId, op: operation, value: value ?? null }
    const { before, remaining } = await updateCredits(deps, writes, callerOf(request), change, 'operation')
    // Taking the credits away (null) takes their refill with them.
    return { data: { remaining, refill: remaining === null ? undefined : withRefillDay(before.refill) } }
  })
}
