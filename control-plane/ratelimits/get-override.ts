import { wildcardMatches, type OverrideRecord } from '../../shared/ratelimits/ratelimit-namespace.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { overrideNotFound, overrideOf, requireNamespace } from './override-access.js'
import type { NamespaceRef } from './ratelimit-namespaces.js'

/** An override to read. */
export interface GetOverrideInput {
  namespace: NamespaceRef
  identifier: string
  /**
   * Which override: the identifier's `own` (Unkey v1's), or the one `applied` to it: its own, else the first-set
   * pattern matching it, the one ratelimits.limit applies (Unkey v2's).
   */
  match: 'own' | 'applied'
}

/**
 * The override of the identifier, for a root key with ratelimit.<namespaceId|*>.read_override: the right, then the
 * namespace (404), then the override (404). v2 answers a root key without the right as if the override did not
 * exist, whatever exists (Unkey's masking, extended to the namespace): it cannot tell which identifiers or
 * namespaces have overrides.
 */
export async function getOverride(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: GetOverrideInput,
): Promise<OverrideRecord> {
  const { identifier } = input
  const found = await deps.namespaces.find(input.namespace)
  const namespace = requireNamespace(caller.principal, found, 'read_override', input.namespace, overrideOf(identifier))
  const pattern =
    input.match === 'applied'
      ? namespace.wildcards.find((rule) => wildcardMatches(rule.identifier, identifier))
      : undefined
  const override =
    (await deps.overrides.get(namespace, identifier)) ??
    (pattern ? await deps.overrides.get(namespace, pattern.identifier) : null)
  if (!override) throw overrideNotFound('Override not found', identifier)
  return override
}
