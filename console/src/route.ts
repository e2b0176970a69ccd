/**
 * The console's pages, addressed by the URL's fragment (`#/apis/api_…`): one HTML page is served, ids in a
 * fragment never reach a server log, and the back button works. Never the root key: that is in session.ts.
 */
export type Route =
  /** The landing page: usage across every api. */
  | { page: 'overview' }
  | { page: 'apis' }
  | { page: 'keys'; apiId: string }
  | { page: 'key'; keyId: string }
  | { page: 'identities' }
  | { page: 'identity'; identityId: string }
  | { page: 'permissions' }
  | { page: 'roles' }
  | { page: 'ratelimits' }
  | { page: 'namespace'; name: string }
  | { page: 'root-keys' }
  | { page: 'webhooks' }
  | { page: 'webhook'; endpointId: string }
  /** The audit log, filtered to one key's entries when it names one (a key page's link to its older entries). */
  | { page: 'audit'; keyId?: string }
  /** A fragment that names no record: malformed percent-encoding (`#/apis/%E0`). */
  | { page: 'not-found'; hash: string }

const SIMPLE = [
  'overview',
  'apis',
  'identities',
  'permissions',
  'roles',
  'ratelimits',
  'root-keys',
  'webhooks',
  'audit',
] as const

export function parseRoute(hash: string): Route {
  const [first = '', second, ...rest] = hash.replace(/^#\/?/, '').split('/')
  const id = second === undefined ? undefined : decodedOrNull([second, ...rest].join('/'))
  // A fragment is whatever the address bar holds: one that does not decode shows a page, not a blank app.
  if (id === null) return { page: 'not-found', hash }
  if (first === 'apis' && id) return { page: 'keys', apiId: id }
  if (first === 'keys' && id) return { page: 'key', keyId: id }
  if (first === 'identities' && id) return { page: 'identity', identityId: id }
  if (first === 'ratelimits' && id) return { page: 'namespace', name: id }
  if (first === 'webhooks' && id) return { page: 'webhook', endpointId: id }
  if (first === 'audit' && id?.startsWith('keys/') && id.length > 'keys/'.length)
    return { page: 'audit', keyId: id.slice('keys/'.length) }
  const simple = SIMPLE.find((page) => page === first)
  return simple ? { page: simple } : { page: 'overview' }
}

function decodedOrNull(text: string): string | null {
  try {
    return decodeURIComponent(text)
  } catch {
    return null
  }
}

/** The fragment of a route, for links. */
export function hrefOf(route: Route): string {
  switch (route.page) {
    case 'keys':
      return `#/apis/${encodeURIComponent(route.apiId)}`
    case 'key':
      return `#/keys/${encodeURIComponent(route.keyId)}`
    case 'identity':
      return `#/identities/${encodeURIComponent(route.identityId)}`
    case 'namespace':
      return `#/ratelimits/${encodeURIComponent(route.name)}`
    case 'webhook':
      return `#/webhooks/${encodeURIComponent(route.endpointId)}`
    case 'audit':
      return route.keyId === undefined ? '#/audit' : `#/audit/keys/${encodeURIComponent(route.keyId)}`
    case 'not-found':
      return route.hash
    default:
      return `#/${route.page}`
  }
}
