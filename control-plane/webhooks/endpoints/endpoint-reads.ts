import { ApiError } from '../../../shared/errors/errors.js'
import { grants, MANAGE_ROOT_KEYS, type RootKeyAction } from '../../../shared/root-keys/root-key-actions.js'
import { typesTaken, type WebhookEventType } from '../../../shared/webhook.js'
import { may, type Principal } from '../../root-keys/root-key-auth.js'
import type { EndpointScope } from './endpoint-wants.js'

/** A family of event types: what comes before the first dot (`key`, `identity`, `rootKey`). */
type EventFamily<T extends string = WebhookEventType> = T extends `${infer Family}.${string}` ? Family : never

/** What lets a root key read a family's events, as the read calls of what they are about ask it. */
interface FamilyReads {
  /** The permission to read the family's events about every record: what an unscoped endpoint is sent. */
  all: string
  /**
   * The api action to read the family's events about one api, for an endpoint scoped to apis. Absent: the family's
   * events are about no api (they carry no `apiId`), and a scoped endpoint is sent none of them (endpoint-wants.ts).
   */
  perApi?: RootKeyAction
}

/**
 * Per family, keys.getKey's `read_key` (a key event carries the key's fields, meta and identity),
 * identities.getIdentity's `identity.*.read_identity`, rootKeys.listRootKeys' `rootkey.*.manage`, analytics.getUsage's
 * `read_analytics`. A new family is a type error here until it has a row.
 */
const FAMILY_READS: Record<EventFamily, FamilyReads> = {
  key: { all: 'api.*.read_key', perApi: 'read_key' },
  identity: { all: 'identity.*.read_identity' },
  rootKey: { all: MANAGE_ROOT_KEYS },
  // Usage is analytics: summed over the endpoint's apis, as analytics.getUsage reads it.
  usage: { all: 'api.*.read_analytics', perApi: 'read_analytics' },
}

/** The rows of the table by family name; a type without one is read with `*` only (refused to any narrower key). */
const READS_BY_NAME: Record<string, FamilyReads | undefined> = FAMILY_READS
const readsOf = (type: WebhookEventType): FamilyReads => READS_BY_NAME[type.split('.')[0]!] ?? { all: '*' }

/** The event types the endpoint takes: those it names, or every type but the opt-in ones. */
const typesOf = (scope: EndpointScope): readonly WebhookEventType[] => typesTaken(scope.eventTypes)

/** The event types the endpoint names that are about no api, so that scoped to apis it would never be sent them. */
export function typesAboutNoApi(scope: EndpointScope): WebhookEventType[] {
  return scope.eventTypes.filter((type) => readsOf(type).perApi === undefined)
}

/**
 * The permissions a root key lacks to read every event the endpoint would be sent: for an unscoped one, each family's
 * `all` (api.*.read_key, identity.*.read_identity, rootkey.*.manage for every type; api.*.read_analytics for usage
 * types, named); for one scoped to apis, each family's `perApi` on each of its apis (`api.<apiId>.read_key`, and
 * `read_analytics` for usage types; `api.*.…` holds them all), its events being about those only.
 */
export function missingReads(principal: Principal, scope: EndpointScope): string[] {
  const apiIds = scope.apiIds ?? []
  const missing = new Set<string>()
  for (const type of typesOf(scope)) {
    const reads = readsOf(type)
    if (apiIds.length === 0) {
      if (!principal.permissions.some((held) => grants(held, reads.all))) missing.add(reads.all)
    } else if (reads.perApi !== undefined) {
      const action = reads.perApi
      for (const apiId of apiIds) if (!may(principal, 'api', apiId, action)) missing.add(`api.${apiId}.${action}`)
    }
  }
  return [...missing]
}

/**
 * Refuses (403) a root key that could not read, through the API, every event the endpoint would be sent: an endpoint
 * is a way to read, so making one, pointing it elsewhere, widening it or replaying to it takes the rights the reads
 * take (webhook rights alone would reveal every api's keys).
 */
export function requireReadsOf(principal: Principal, scope: EndpointScope): void {
  const missing = missingReads(principal, scope)
  if (missing.length === 0) return
  throw new ApiError(
    'INSUFFICIENT_PERMISSIONS',
    `the root key needs ${missing.join(' and ')} to be sent what the endpoint receives ` +
      '(scope it to apis it may read with apiIds, or to event types it may read with eventTypes)',
  )
}
