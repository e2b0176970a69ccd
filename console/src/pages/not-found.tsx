import { hrefOf } from '../router.js'
import { Page } from '../ui/page.js'

/** An address in the console that names no page: said so, with the way back. */
export function NotFoundPage({ hash }: { hash: string }) {
  return (
    <Page title="Page not found">
      <p>
        The console has no page at <span class="mono">{hash}</span>: the address may have been cut or mistyped.
      </p>
      <p>
        <a href={hrefOf({ page: 'overview' })}>Go to the overview</a>
      </p>
    </Page>
  )
}
