import { invalid, notFound } from '../../../shared/errors/errors.js'
import type { ApiKeyStore } from '../../../shared/store/api-keys/api-key-store.js'
import { typesAboutNoApi } from './endpoint-reads.js'
import type { EndpointScope } from './endpoint-wants.js'

/**
 * Refuses (400, about `field`) an endpoint scoped to apis that names an event type about no api (identity.*,
 * rootKey.*): it would never be sent one, and a subscription that cannot be served is a mistake to point out, not
 * to store.
 */
export function refuseTypesOutOfScope(scope: EndpointScope, field: 'apiIds' | 'eventTypes'): void {
  if ((scope.apiIds ?? []).length === 0) return
  const never = typesAboutNoApi(scope)
  if (never.length === 0) return
  throw invalid(
    field,
    `${never.join(', ')} ${never.length === 1 ? 'is' : 'are'} about no api: an endpoint scoped to apis (apiIds) is ` +
      'never sent such events; leave them out, or leave apiIds empty',
  )
}

/** Refuses (404, the first one missing) a scope naming an api that does not exist. */
export async function requireApisExist(keys: Pick<ApiKeyStore, 'getApi'>, apiIds: readonly string[]): Promise<void> {
  const found = await Promise.all(apiIds.map((apiId) => keys.getApi(apiId)))
  const absent = apiIds.find((_, index) => found[index] === null)
  if (absent !== undefined) throw notFound('api', `api ${absent} not found`)
}
