import type { Caller } from '../caller.js'
import { notFound } from '../../shared/errors/errors.js'
import type { NamespaceRecord } from '../../shared/ratelimits/ratelimit-namespace.js'
import type { ResourceAction } from '../../shared/root-keys/root-key-actions.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { may, requireNamespaceAction } from '../root-keys/root-key-auth.js'

/**
 * A rate-limit namespace named for the first time (by ratelimits.limit or setOverride): created when the root key
 * may (ratelimit.*.create_namespace), else a 404 as Unkey answers — but never for a call that would be refused
 * anyway: a namespace not made yet has an id no permission names, so only ratelimit.*.<action> lets the call on.
 */
export async function namespaceOnFirstUse(
  caller: Caller,
  deps: Pick<ControlPlaneDeps, 'namespaces' | 'audit'>,
  name: string,
  action: ResourceAction<'ratelimit'>,
): Promise<NamespaceRecord> {
  const principal = caller.principal
  requireNamespaceAction(principal, undefined, action)
  if (!may(principal, 'ratelimit', '*', 'create_namespace')) throw notFound('namespace', `Namespace ${name} not found`)
  return createNamespace(caller, deps, name)
}

/**
 * Makes the namespace, or finds the one a concurrent call just made; logged and audited when made. The caller has
 * checked that the root key may (v1 and v2 answer a refusal differently).
 */
export async function createNamespace(
  caller: Caller,
  deps: Pick<ControlPlaneDeps, 'namespaces' | 'audit'>,
  name: string,
): Promise<NamespaceRecord> {
  const { namespace, created } = await deps.namespaces.create(name)
  if (created) {
    const rootKeyId = caller.principal.rootKeyId
    caller.log.info({ namespaceId: namespace.id, rootKeyId }, 'rate-limit namespace created')
    await deps.audit.record(caller, 'ratelimits.createNamespace', { after: { id: namespace.id, name } })
  }
  return namespace
}
