import type { OverrideRecord } from '../../shared/ratelimits/ratelimit-namespace.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { RecordPage } from '../index-page.js'
import { requireNamespace } from './override-access.js'
import type { NamespaceRef } from './ratelimit-namespaces.js'
import type { OverridePage } from './ratelimit-overrides.js'

/** A page of a namespace's overrides to list. */
export interface ListOverridesInput {
  namespace: NamespaceRef
  /** The `cursor` of the page before; none (or empty) for the first page. */
  cursor?: string | undefined
  limit: number
  /**
   * How the page ends: `counted` says how many overrides the namespace has and gives a cursor whenever the page is
   * full (Unkey v1's); `exact` gives a cursor only when another override follows (Unkey v2's: its SDK asks for
   * another page while a cursor comes back).
   */
  paging: 'counted' | 'exact'
}

/** A page of the namespace's overrides, oldest first, for a root key with ratelimit.<namespaceId|*>.read_override. */
export async function listOverrides(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: ListOverridesInput & { paging: 'counted' },
): Promise<OverridePage>
export async function listOverrides(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: ListOverridesInput & { paging: 'exact' },
): Promise<RecordPage<OverrideRecord>>
export async function listOverrides(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: ListOverridesInput,
): Promise<OverridePage | RecordPage<OverrideRecord>> {
  const found = await deps.namespaces.find(input.namespace)
  const namespace = requireNamespace(caller.principal, found, 'read_override', input.namespace)
  const { cursor, limit } = input
  if (input.paging === 'counted') return deps.overrides.list(namespace, { cursor, limit })
  return deps.overrides.page(namespace, { ...(cursor ? { cursor } : {}), limit })
}
