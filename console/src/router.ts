import { useEffect, useState } from 'preact/hooks'

/**
 * The console's pages, addressed by the URL's fragment (`#/apis/api_…`): one HTML page is served, ids in a
 * fragment never reach a server log, and the back button works. Never the root key: that is in session.ts.
 */
export type Route =
  | { page: 'apis' }
  | { page: 'keys'; apiId: string }
  | { page: 'key'; keyId: string }
  | { page: 'identities' }
  | { page: 'permissions' }
  | { page: 'roles' }
  | { page: 'ratelimits' }
  | { page: 'namespace'; name: string }
  | { page: 'root-keys' }
  | { page: 'audit' }

const SIMPLE = ['apis', 'identities', 'permissions', 'roles', 'ratelimits', 'root-keys', 'audit'] as const

export function parseRoute(hash: string): Route {
  const [first = '', second, ...rest] = hash.replace(/^#\/?/, '').split('/')
  const id = second === undefined ? undefined : decodeURIComponent([second, ...rest].join('/'))
  if (first === 'apis' && id) return { page: 'keys', apiId: id }
  if (first === 'keys' && id) return { page: 'key', keyId: id }
  if (first === 'ratelimits' && id) return { page: 'namespace', name: id }
  const simple = SIMPLE.find((page) => page === first)
  return simple ? { page: simple } : { page: 'apis' }
}

/** The fragment of a route, for links. */
export function hrefOf(route: Route): string {
  switch (route.page) {
    case 'keys':
      return `#/apis/${encodeURIComponent(route.apiId)}`
    case 'key':
      return `#/keys/${encodeURIComponent(route.keyId)}`
    case 'namespace':
      return `#/ratelimits/${encodeURIComponent(route.name)}`
    default:
      return `#/${route.page}`
  }
}

export function navigate(route: Route): void {
  window.location.hash = hrefOf(route)
}

/** The current route, following the fragment as links and the back button change it. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash))
  useEffect(() => {
    const follow = () => setRoute(parseRoute(window.location.hash))
    window.addEventListener('hashchange', follow)
    return () => window.removeEventListener('hashchange', follow)
  }, [])
  return route
}
