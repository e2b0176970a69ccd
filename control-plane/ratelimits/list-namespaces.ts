import type { NamespaceRecord } from '../../shared/ratelimits/ratelimit-namespace.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { PageOptions, RecordPage } from '../index-page.js'
import { requireAction } from '../root-keys/root-key-auth.js'

/** A page of every namespace, oldest first, for a root key that may read them all (`ratelimit.*.read_namespace`). */
export async function listNamespaces(
  deps: ControlPlaneDeps,
  caller: Caller,
  page: PageOptions,
): Promise<RecordPage<NamespaceRecord>> {
  requireAction(caller.principal, 'ratelimit', '*', 'read_namespace')
  return deps.namespaces.list(page)
}
