import { useEffect, useState } from 'preact/hooks'
import { hrefOf, parseRoute, type Route } from './route.js'

// What the pages import: routes (route.ts, free of the DOM so that tests read it in Node) and how to follow them.
export { hrefOf, parseRoute, type Route }

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
