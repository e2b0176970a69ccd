import type { KeygateApi } from '../api.js'
import type { Route } from '../router.js'
import { Page } from '../ui/page.js'

/** The page a route shows. */
export function PageOf({ route }: { route: Route; api: KeygateApi }) {
  return (
    <Page title={route.page}>
      <p>Coming next.</p>
    </Page>
  )
}
