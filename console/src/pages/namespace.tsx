import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { formatDuration } from '../format.js'
import { hrefOf } from '../router.js'
import { ConfirmDialog } from '../ui/confirm.js'
import { ErrorNote, Page, StatusNote } from '../ui/page.js'
import { Pager, useCursorPages } from '../ui/pager.js'
import { useLoad } from '../ui/use-load.js'
import { OverrideForm } from './override-form.js'

interface Override {
  id: string
  identifier: string
  limit: number
  duration: number
  async: boolean
}

/** A namespace's overrides: list (paged), set, edit, delete. */
export function NamespacePage({ api, name }: { api: KeygateApi; name: string }) {
  const pages = useCursorPages()
  const list = useLoad(
    () =>
      api.get<{ overrides: Override[]; total: number; cursor?: string }>('ratelimits.listOverrides', {
        namespaceName: name,
        limit: 50,
        cursor: pages.cursor,
      }),
    [api, name, pages.cursor],
  )
  const [status, setStatus] = useState<string>()
  const [editing, setEditing] = useState<Override>()
  const [deleting, setDeleting] = useState<Override>()
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
          setStatus(editing ? `Saved the override of ${editing.identifier}.` : 'Saved the override.')
          setEditing(undefined)
          list.reload()
        }}
      />
      <StatusNote text={status} />
      <h2>Overrides</h2>
      <ErrorNote error={list.error} />
      {list.data ? (
        <table>
          <caption class="visually-hidden">Overrides</caption>
          <thead>
            <tr>
              <th scope="col">Identifier</th>
              <th scope="col">Limit</th>
              <th scope="col">Counted</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.overrides.map((override) => (
              <tr key={override.id}>
                <td class="name mono">{override.identifier}</td>
                <td>
                  {override.limit} per {formatDuration(override.duration)}
                </td>
                <td>{override.async ? 'asynchronously' : 'exactly'}</td>
                <td class="actions">
                  <button type="button" class="secondary" onClick={() => setEditing(override)}>
                    Edit<span class="visually-hidden"> override {override.identifier}</span>
                  </button>
                  <button type="button" class="secondary" onClick={() => setDeleting(override)}>
                    Delete<span class="visually-hidden"> override {override.identifier}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Pager
        what="overrides"
        page={pages.page}
        nextCursor={list.data?.cursor}
        onNext={pages.next}
        onPrevious={pages.previous}
      />
      {deleting ? (
        <ConfirmDialog
          title={`Delete the override of ${deleting.identifier}?`}
          confirmLabel="Delete override"
          onClose={() => setDeleting(undefined)}
          onConfirm={async () => {
            await api.post('ratelimits.deleteOverride', { namespaceName: name, identifier: deleting.identifier })
            setStatus(`Deleted the override of ${deleting.identifier}.`)
            list.reload()
          }}
        >
          <p>Calls for it get the limit they send again.</p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}
