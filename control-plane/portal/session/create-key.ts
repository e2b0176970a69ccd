import { invalid } from '../../../shared/errors/errors.js'
import { generateKey } from '../../../shared/keys/key-material.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { newId } from '../../../shared/ids.js'
import { checkedNewKey } from '../../keys/key-fields.js'
import type { PortalCaller } from './portal-caller.js'
import { requireScope } from '../portal-scopes.js'
import { requireRoom, requireWithinRoom } from './key-room.js'
import { portalActor } from './portal-actor.js'
import { keyFieldsOf } from './portal-key-fields.js'
import { sessionApis } from './session-keys.js'

/**
 * A key for the session's customer, in one of its apis (the only one, or the one named), with the portal's defaults
 * and the name the customer gave: nothing else the browser sends reaches the key. Needs keys:create (403); refused
 * (412) once the customer holds the portal's maximum of live keys in that api (key-room.ts), checked again once the
 * key is written so that calls made at once cannot pass it together. The key is answered this once.
 */
export async function createPortalKey(
  deps: ControlPlaneDeps,
  caller: PortalCaller,
  input: { apiId?: string | undefined; name?: string | undefined },
): Promise<{ keyId: string; key: string }> {
  requireScope(caller.session.scopes, 'keys:create')
  const apis = sessionApis(caller)
  const apiId = input.apiId ?? (apis.length === 1 ? apis[0] : undefined)
  if (apiId === undefined) throw invalid('apiId', `name one of the session's apis: ${apis.join(', ')}`)
  if (!apis.includes(apiId)) throw invalid('apiId', "is not one of the session's apis")
  const { externalId } = caller.session
  await requireRoom(deps, caller, apiId)
  const now = deps.clock.now()
  const defaults = caller.portal.keyDefaults
  const { key, ...material } = generateKey(defaults?.prefix, defaults?.byteLength)
  const fields = checkedNewKey(keyFieldsOf(defaults, { apiId, externalId, name: input.name }, now), now)
  const record = { id: newId('key', now), ...material, ...fields }
  const actor = portalActor(caller)
  const { identity, created } = await deps.identities.upsert(externalId)
  if (created) await deps.audit.append(actor, 'identities.createIdentity', { after: { ...identity } })
  const write = await deps.writes.createKey(record)
  try {
    await requireWithinRoom(deps, caller, apiId)
  } catch (err) {
    await deps.writes.deleteKey(write.record.id)
    throw err
  }
  caller.log.info({ keyId: write.record.id, apiId }, 'key created in the portal')
  await deps.audit.append(actor, 'portal.createKey', { apiId, keyId: write.record.id, after: write.record })
  return { keyId: write.record.id, key }
}
