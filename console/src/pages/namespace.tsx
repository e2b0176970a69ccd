import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import type { Override } from '../types.js'
import { formatDuration } from '../format.js'
import { hrefOf } from '../router.js'
import { EntityTable } from '../ui/entity-table.js'
import { Page, StatusNote, useStatus } from '../ui/page.js'
import { Pager } from '../ui/pager.js'
import { useRowConfirm } from '../ui/row-confirm.js'
import { usePagedLoad } from '../ui/use-paged-load.js'
import { OverrideForm } from './override-form.js'

/** A namespace's overrides: list (paged), set, edit, delete. */
export function NamespacePage({ api, name }: { api: KeygateApi; name: string }) {
  const list = usePagedLoad(
    (cursor) =>
      api.get('ratelimits.listOverrides', {
        namespaceName: name,
        limit: 50,
        cursor,
      }),
    [api, name],
  )
  const [status, say] = useStatus(list.reload)
  const [editing, setEditing] = useState<Override>()
  const remove = useRowConfirm(
    (override: Override) => ({
      title: `Delete the override of ${override.identifier}?`,
      confirmLabel: 'Delete override',
      warning: 'Calls for it get the limit they send again.',
      run: () => api.post('ratelimits.deleteOverride', { namespaceName: name, identifier: override.identifier }),
      said: `Deleted the override of ${override.identifier}.`,
    }),
    say,
  )
  return (
    <Page title={`Namespace ${name}`}>
      <p class="muted">
        <a href={hrefOf({ page: 'ratelimits' })}>Rate limits</a> / {name}
      </p>
      <h2>{editing ? `Edit the override of ${editing.identifier}` : 'Set an override'}</h2>
      <OverrideForm
        key={editing?.id ?? 'new'}
        api={api}
        namespace={name}
        initial={editing}
        onSaved={() => {
          setEditing(undefined)
          say(editing ? `Saved the override of ${editing.identifier}.` : 'Saved the override.')
        }}
      />
      <StatusNote text={status} />
      <h2>Overrides</h2>
      <EntityTable
        caption="Overrides"
        rows={list.data?.overrides}
        error={list.error}
        columns={[
          { header: 'Identifier', class: 'name mono', cell: (override) => override.identifier },
          { header: 'Limit', cell: (override) => `${override.limit} per ${formatDuration(override.duration)}` },
          { header: 'Counted', cell: (override) => (override.async ? 'asynchronously' : 'exactly') },
        ]}
        actions={(override) => [
          { label: 'Edit', what: `override ${override.identifier}`, onClick: () => setEditing(override) },
          { label: 'Delete', what: `override ${override.identifier}`, onClick: () => remove.open(override) },
        ]}
      />
      <Pager what="overrides" {...list.pager} />
      {remove.dialog}
    </Page>
  )
}
