import type { Caller } from './caller.js'
import { notFound } from '../shared/errors.js'
import type { NamespaceRecord, OverrideRecord } from '../shared/ratelimit-namespace.js'
import type { ResourceAction } from '../shared/root-key-actions.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import { requireNamespaceAction, type Principal } from './root-key-auth.js'

/** Rate-limit overrides as both wire formats (v1, v2) reach them: the root key checked, then the store, logged. */

/**
 * The namespace found (null: none) once the root key may do `action` on it. One that does not exist is a 404 — a
 * 403 for a root key that may not do the action on every namespace: it learns nothing of which exist.
 */
export function requireNamespace(
  principal: Principal,
  found: NamespaceRecord | null,
  action: ResourceAction<'ratelimit'>,
  notFoundMessage: string,
): NamespaceRecord {
  requireNamespaceAction(principal, found?.id, action)
  if (!found) throw notFound('namespace', notFoundMessage)
  return found
}

/**
 * Sets the identifier's override (a new one, or its own changed in place), logged and audited. Without `async`
 * (v2 does not speak it) the override keeps the one it has: false for a new one.
 */
export async function setOverride(
  deps: Pick<ControlPlaneDeps, 'overrides' | 'audit'>,
  caller: Caller,
  namespace: NamespaceRecord,
  identifier: string,
  rule: { limit: number; duration: number; async?: boolean },
): Promise<OverrideRecord> {
  const before = await deps.overrides.get(namespace, identifier)
  const override = await deps.overrides.set(namespace, identifier, {
    limit: rule.limit,
    duration: rule.duration,
    async: rule.async ?? before?.async ?? false,
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

/** Deletes the identifier's override, logged and audited; null if it has none. */
export async function deleteOverride(
  deps: Pick<ControlPlaneDeps, 'overrides' | 'audit'>,
  caller: Caller,
  namespace: NamespaceRecord,
  identifier: string,
): Promise<OverrideRecord | null> {
  const override = await deps.overrides.delete(namespace, identifier)
  if (!override) return null
  caller.log.info(
    { namespaceId: namespace.id, overrideId: override.id, rootKeyId: caller.principal.rootKeyId },
    'rate-limit override deleted',
  )
  await deps.audit.record(caller, 'ratelimits.deleteOverride', { before: { ...override } })
  return override
}
