import type { OverrideRecord } from '../../shared/ratelimits/ratelimit-namespace.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { namespaceOnFirstUse } from './namespace-first-use.js'
import { firstUseName, requireNamespace } from './override-access.js'
import type { NamespaceRef } from './ratelimit-namespaces.js'

/** The override to set: for an identifier or a `*` pattern of a namespace. */
export interface SetOverrideInput {
  namespace: NamespaceRef
  identifier: string
  limit: number
  duration: number
  /** Whether calls it applies to are counted async; left out, the override keeps the one it has (false: a new one). */
  async?: boolean | undefined
}

/**
 * Sets the identifier's override (a new one, or its own changed in place), logged and audited, once the root key
 * may (ratelimit.<namespaceId|*>.set_override). A namespace named by its name for the first time is made, as
 * ratelimits.limit makes it (with ratelimit.*.create_namespace, else 404): on Unkey the limit calls before it would
 * have made it, but a Keygate verifier counts a namespace without making one.
 */
export async function setOverride(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: SetOverrideInput,
): Promise<OverrideRecord> {
  const found = await deps.namespaces.find(input.namespace)
  const name = found ? undefined : firstUseName(input.namespace)
  const namespace =
    name === undefined
      ? requireNamespace(caller.principal, found, 'set_override', input.namespace)
      : await namespaceOnFirstUse(caller, deps, name, 'set_override')
  const before = await deps.overrides.get(namespace, input.identifier)
  const override = await deps.overrides.set(namespace, input.identifier, {
    limit: input.limit,
    duration: input.duration,
    async: input.async ?? before?.async ?? false,
  })
  caller.log.info(
    { namespaceId: namespace.id, overrideId: override.id, rootKeyId: caller.principal.rootKeyId },
    'rate-limit override set',
  )
  await deps.audit.record(caller, 'ratelimits.setOverride', {
    before: before && { ...before },
    after: { ...override },
  })
  return override
}
