import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { formatTime } from '../format.js'
import { hrefOf, navigate } from '../router.js'
import { EntityTable } from '../ui/entity-table.js'
import { Page } from '../ui/page.js'
import { Pager } from '../ui/pager.js'
import { usePagedLoad } from '../ui/use-paged-load.js'
import { OverrideForm } from './override-form.js'

/**
 * Rate-limit namespaces (ratelimits.listNamespaces). A namespace is made by its first use: setting an override in a
 * namespace of a new name makes it.
 */
export function RatelimitsPage({ api }: { api: KeygateApi }) {
  const list = usePagedLoad((cursor) => api.get('ratelimits.listNamespaces', { limit: 50, cursor }), [api])
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
      <EntityTable
        caption="Namespaces"
        rows={list.data?.namespaces}
        error={list.error}
        empty={list.pager.page === 1 ? 'No namespaces yet: ratelimits.limit or an override makes one.' : undefined}
        columns={[
          {
            header: 'Name',
            class: 'name',
            cell: (row) => <a href={hrefOf({ page: 'namespace', name: row.name })}>{row.name}</a>,
          },
          { header: 'Id', class: 'mono', cell: (row) => row.id },
          { header: 'Created', cell: (row) => formatTime(row.createdAt) },
        ]}
      />
      <Pager what="namespaces" {...list.pager} />
    </Page>
  )
}
