import type { KeygateServer } from '../../shared/http/build-server.js'
import { registerV2 } from '../../shared/http/v2-route.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { updateCredits } from '../key-credits.js'
import type { KeyWrites } from '../key-writes.js'
import { withRefillDay } from '../refill-rules.js'
import { callerOf } from '../root-key-auth.js'
import { UpdateCreditsBody } from './key-bodies.js'
import { CreditsData } from './key-data.js'

/**
 * v2's keys.updateCredits (Unkey's V2Keys* schemas)
 * over the operation v1 uses (key-credits.ts): a key made through one
 * format verifies and reads through the other.
 */
export function registerV2KeyRoutes(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  registerV2(app, 'keys.updateCredits', { body: UpdateCreditsBody, data: CreditsData }, async (request) => {
    const { keyId, operation, value } = request.body
    const change = { keyId, op: operation, value: value ?? null }
    const { before, remaining } = await updateCredits(deps, writes, callerOf(request), change, 'operation')
    // Taking the credits away (null) takes their refill with them.
    return { data: { remaining, refill: remaining === null ? undefined : withRefillDay(before.refill) } }
  })
}
