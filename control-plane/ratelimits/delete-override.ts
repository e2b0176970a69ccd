import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { overrideNotFound, requireNamespace } from './override-access.js'
import type { NamespaceRef } from './ratelimit-namespaces.js'

/**
 * Deletes the identifier's override, logged and audited, for a root key with
 * ratelimit.<namespaceId|*>.delete_override: the right, then the namespace (404), then the override (404).
 */
export async function deleteOverride(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: { namespace: NamespaceRef; identifier: string },
): Promise<void> {
  const { identifier } = input
  const found = await deps.namespaces.find(input.namespace)
  const namespace = requireNamespace(caller.principal, found, 'delete_override', input.namespace)
  const override = await deps.overrides.delete(namespace, identifier)
  if (!override) throw overrideNotFound(`Override with ${identifier} identifier not found`, identifier)
  caller.log.info(
    { namespaceId: namespace.id, overrideId: override.id, rootKeyId: caller.principal.rootKeyId },
    'rate-limit override deleted',
  )
  await deps.audit.record(caller, 'ratelimits.deleteOverride', { before: { ...override } })
}
