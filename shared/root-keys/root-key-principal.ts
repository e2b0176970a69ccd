import { ApiError } from '../errors/errors.js'
import type { ResourceAction, RootKeyResource } from './root-key-actions.js'

/** Who made a call that needs a root key: the control plane's management calls, and every v2 call. */
export interface Principal {
  rootKeyId: string
  permissions: readonly string[]
}

/** The id the bootstrap root key (KEYGATE_ROOT_KEY) acts under: in the audit log, the rate limit, the logs. */
export const BOOTSTRAP_ID = 'root_bootstrap'

const BEARER = /^Bearer\s+(\S+)\s*$/i

/**
 * The root key an `Authorization` header carries, or the contract's UNAUTHORIZED: v1 answers every refusal 403; v2
 * tells a missing header and one that is not `Bearer <key>` (400) from an unknown key (401).
 */
export function bearerRootKeyOf(header: string | string[] | undefined): string {
  if (header === undefined || header === '') throw noRootKey('missing')
  const match = typeof header === 'string' ? BEARER.exec(header) : null
  if (!match) throw noRootKey('malformed')
  return match[1]!
}

const SEND_A_ROOT_KEY = 'send a root key as `Authorization: Bearer <root key>`'

/** A header without a root key in it: none, or not `Bearer <key>` (v2's 400, about the Authorization header). */
export const noRootKey = (refused: 'missing' | 'malformed') =>
  new ApiError('UNAUTHORIZED', `authorization: ${SEND_A_ROOT_KEY}`, undefined, {
    credential: { kind: 'root-key', refused },
    problem: `authentication/${refused}`,
    fields: [{ location: 'header.authorization', message: SEND_A_ROOT_KEY }],
  })

/** One answer for every root key that does not authenticate: unknown, revoked, or the bootstrap key turned off. */
export const rootKeyNotValid = () =>
  new ApiError('UNAUTHORIZED', 'authorization: the root key is not valid', undefined, {
    credential: { kind: 'root-key', refused: 'unknown' },
    problem: 'authentication/key_not_found',
  })

/** Whether the principal may do `action` on the record `id` of `resource` (`*` = on every one). */
export function may<R extends RootKeyResource>(
  principal: Principal,
  resource: R,
  id: string,
  action: ResourceAction<R>,
): boolean {
  // Compared part by part, never as a string built from `id`: an id from a request that holds a dot must not pose
  // as `<id>.<action>` of a permission held.
  return principal.permissions.some((held) => {
    if (held === '*') return true
    const [scope, heldId, heldAction] = held.split('.')
    return scope === resource && (heldId === '*' || heldId === id) && (heldAction === '*' || heldAction === action)
  })
}

/**
 * Whether the principal may do `action` on some record of `resource`, whichever: `*`, `<resource>.*.<action>` or
 * `<resource>.<id>.<action>` for any id. A root key scoped to some records is shown those in a listing, and what it
 * cannot reach is hidden from it as if absent; a root key with no such permission at all is refused outright.
 */
export function mayOnSome<R extends RootKeyResource>(principal: Principal, resource: R, action: ResourceAction<R>) {
  return principal.permissions.some((held) => {
    if (held === '*') return true
    const [scope, , heldAction] = held.split('.')
    return scope === resource && (heldAction === '*' || heldAction === action)
  })
}

/**
 * Throws the contract's 403 unless the principal may do every one of `actions` on the record `id` of `resource`
 * (`*`: resources with no per-record scope, such as roles and permissions, are checked on `*`).
 */
export function requireAction<R extends RootKeyResource>(
  principal: Principal,
  resource: R,
  id: string,
  ...actions: ResourceAction<R>[]
): void {
  requireActionOn(principal, resource, id, id, ...actions)
}

/**
 * As requireAction, for a record the caller reached through another (the api of a key named by id, the identity of
 * an externalId): the message names it as `shownAs` (`<the key's api>`), not by its id, which a caller refused
 * must not learn from the refusal.
 */
export function requireActionOn<R extends RootKeyResource>(
  principal: Principal,
  resource: R,
  id: string,
  shownAs: string,
  ...actions: ResourceAction<R>[]
): void {
  const missing = actions.filter((action) => !may(principal, resource, id, action))
  if (missing.length > 0) {
    throw new ApiError(
      'INSUFFICIENT_PERMISSIONS',
      `the root key needs ${missing.map((action) => `${resource}.${shownAs}.${action}`).join(' and ')}`,
    )
  }
}

/**
 * Throws the contract's 403 unless the principal may do `action` on the rate-limit namespace `id` — one not made yet
 * is undefined, checked on `*`, and with `toCreate` ratelimit.*.create_namespace is needed too. The refusal is one
 * message whether the namespace exists or not: a caller names a namespace by its name, and must not learn from a
 * refusal that it exists, nor its id.
 */
export function requireNamespaceAction(
  principal: Principal,
  id: string | undefined,
  action: ResourceAction<'ratelimit'>,
  toCreate = false,
): void {
  const allowed =
    may(principal, 'ratelimit', id ?? '*', action) &&
    (!toCreate || may(principal, 'ratelimit', '*', 'create_namespace'))
  if (allowed) return
  throw new ApiError(
    'INSUFFICIENT_PERMISSIONS',
    `the root key needs ratelimit.<the namespace>.${action} (for a namespace not made yet: ratelimit.*.${action}, ` +
      'and ratelimit.*.create_namespace to make it)',
  )
}
