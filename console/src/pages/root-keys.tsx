import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { formatTime, splitList } from '../format.js'
import { ConfirmDialog } from '../ui/confirm.js'
import { Field } from '../ui/fields.js'
import { ErrorNote, Page, StatusNote } from '../ui/page.js'
import { Pager, useCursorPages } from '../ui/pager.js'
import { ShownOnce } from '../ui/shown-once.js'
import { useLoad } from '../ui/use-load.js'

interface RootKey {
  id: string
  name?: string
  start?: string
  permissions: string[]
  createdAt: number
  lastUsedAt?: number
}

/** Root keys: list, create (the key shown once), revoke. Keygate lets a root key make none stronger than itself. */
export function RootKeysPage({ api }: { api: KeygateApi }) {
  const pages = useCursorPages()
  const list = useLoad(
    () =>
      api.get<{ rootKeys: RootKey[]; cursor?: string }>('rootKeys.listRootKeys', { limit: 50, cursor: pages.cursor }),
    [api, pages.cursor],
  )
  const [name, setName] = useState('')
  const [permissions, setPermissions] = useState('')
  const [created, setCreated] = useState<string>()
  const [status, setStatus] = useState<string>()
  const [error, setError] = useState<unknown>()
  const [revoking, setRevoking] = useState<RootKey>()
  const create = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    try {
      const made = await api.post<{ rootKeyId: string; key: string }>('rootKeys.createRootKey', {
        ...(name.trim() ? { name: name.trim() } : {}),
        permissions: splitList(permissions),
      })
      setCreated(made.key)
      setStatus(`Created the root key ${made.rootKeyId}.`)
      setName('')
      setPermissions('')
      list.reload()
    } catch (err) {
      setError(err)
    }
  }
  return (
    <Page title="Root keys">
      {created ? <ShownOnce label="New root key" secret={created} onDone={() => setCreated(undefined)} /> : null}
      <form aria-label="Create a root key" onSubmit={(event) => void create(event)}>
        <Field label="Name" value={name} onChange={setName} placeholder="deploy bot" />
        <Field
          label="Permissions"
          value={permissions}
          onChange={setPermissions}
          required
          hint="e.g. api.*.read_key, api.api_123.create_key (or * for everything)"
        />
        <button type="submit">Create root key</button>
        <ErrorNote error={error} />
      </form>
      <StatusNote text={status} />
      <ErrorNote error={list.error} />
      {list.data ? (
        <table>
          <caption class="visually-hidden">Root keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Start</th>
              <th scope="col">Permissions</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.rootKeys.map((rootKey) => (
              <tr key={rootKey.id}>
                <td class="name">{rootKey.name ?? ''}</td>
                <td class="mono">{rootKey.id}</td>
                <td class="mono">{rootKey.start ? `${rootKey.start}…` : ''}</td>
                <td class="mono">{rootKey.permissions.join(', ')}</td>
                <td>{formatTime(rootKey.createdAt)}</td>
                <td>{rootKey.lastUsedAt ? formatTime(rootKey.lastUsedAt) : 'never'}</td>
                <td>
                  <button type="button" class="secondary" onClick={() => setRevoking(rootKey)}>
                    Revoke<span class="visually-hidden"> root key {rootKey.name ?? rootKey.id}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Pager
        what="root keys"
        page={pages.page}
        nextCursor={list.data?.cursor}
        onNext={pages.next}
        onPrevious={pages.previous}
      />
      {revoking ? (
        <ConfirmDialog
          title={`Revoke the root key ${revoking.name ?? revoking.id}?`}
          confirmLabel="Revoke root key"
          onClose={() => setRevoking(undefined)}
          onConfirm={async () => {
            await api.post('rootKeys.revokeRootKey', { rootKeyId: revoking.id })
            setStatus(`Revoked the root key ${revoking.name ?? revoking.id}: its next call is refused.`)
            list.reload()
          }}
        >
          <p>Every call made with it is refused from now on. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}
