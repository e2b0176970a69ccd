import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { formatTime } from '../format.js'
import { hrefOf, navigate } from '../router.js'
import { ErrorNote, Page } from '../ui/page.js'
import { Pager, useCursorPages } from '../ui/pager.js'
import { useLoad } from '../ui/use-load.js'
import { OverrideForm } from './override-form.js'

interface Namespace {
  id: string
  name: string
  createdAt: number
}

/**
 * Rate-limit namespaces (ratelimits.listNamespaces). A namespace is made by its first use: setting an override in a
 * namespace of a new name makes it.
 */
export function RatelimitsPage({ api }: { api: KeygateApi }) {
  const pages = useCursorPages()
  const list = useLoad(
    () =>
      api.get<{ namespaces: Namespace[]; cursor?: string }>('ratelimits.listNamespaces', {
        limit: 50,
        cursor: pages.cursor,
      }),
    [api, pages.cursor],
  )
  const [namespace, setNamespace] = useState('')
  return (
    <Page title="Rate limits">
      <h2>Set an override</h2>
      <p class="muted">An override replaces the limit calls send for an identifier (or a pattern with *).</p>
      <OverrideForm
        api={api}
        namespace={namespace}
        onNamespace={setNamespace}
        onSaved={(name) => navigate({ page: 'namespace', name })}
      />
      <h2>Namespaces</h2>
      <ErrorNote error={list.error} />
      {list.data ? (
        list.data.namespaces.length === 0 && pages.page === 1 ? (
          <p class="muted">No namespaces yet: ratelimits.limit or an override makes one.</p>
        ) : (
          <table>
            <caption class="visually-hidden">Namespaces</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Id</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.namespaces.map((row) => (
                <tr key={row.id}>
                  <td class="name">
                    <a href={hrefOf({ page: 'namespace', name: row.name })}>{row.name}</a>
                  </td>
                  <td class="mono">{row.id}</td>
                  <td>{formatTime(row.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
      <Pager
        what="namespaces"
        page={pages.page}
        nextCursor={list.data?.cursor}
        onNext={pages.next}
        onPrevious={pages.previous}
      />
    </Page>
  )
}
