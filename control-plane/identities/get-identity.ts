import type { IdentityRecord } from '../../shared/identity.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { allowedIdentity, type IdentityName } from './identity-access.js'

/** The identity `name` names, if the root key may read it (allowedIdentity says in which order it checks). */
export async function getIdentity(deps: ControlPlaneDeps, caller: Caller, name: IdentityName): Promise<IdentityRecord> {
  return (await allowedIdentity(deps.identities, caller.principal, name, 'read_identity')).doc
}
