import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { Principal } from '../../../shared/root-keys/root-key-principal.js'
import type { QueryDataset } from './query-rules.js'
import { ApiError } from '../../../shared/errors/errors.js'

/** Which rows of a dataset a root key may read: all of them, or those of some apis (or namespaces) only. */
export type QueryScope = { kind: 'all' } | { kind: 'some'; ids: string[] }

/**
 * What `read_analytics` a root key holds for the dataset's resource (`api` for verifications, `ratelimit` for rate
 * limits): on `*` (or a permission that grants it: `*`, `api.*.*`), every row; on some ids, their rows only — for
 * apis, those that still exist; ids that name nothing see nothing, never a 403. None at all: the contract's 403.
 */
export async function scopeOf(
  deps: Pick<ControlPlaneDeps, 'store'>,
  principal: Principal,
  dataset: QueryDataset,
): Promise<QueryScope> {
  const resource = dataset.name === 'verifications' ? 'api' : 'ratelimit'
  const ids = new Set<string>()
  for (const held of principal.permissions) {
    if (held === '*') return { kind: 'all' }
    const [scope, id, action] = held.split('.')
    if (scope !== resource || (action !== '*' && action !== 'read_analytics') || id === undefined) continue
    if (id === '*') return { kind: 'all' }
    ids.add(id)
  }
  if (ids.size === 0) {
    throw new ApiError('INSUFFICIENT_PERMISSIONS', `Missing permission: '${resource}.*.read_analytics'`)
  }
  if (resource === 'ratelimit') return { kind: 'some', ids: [...ids] }
  const exists = await Promise.all([...ids].map(async (id) => (await deps.store.keys.getApi(id)) !== null))
  return { kind: 'some', ids: [...ids].filter((_, i) => exists[i]) }
}
