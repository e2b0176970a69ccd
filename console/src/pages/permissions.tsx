import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { ConfirmDialog } from '../ui/confirm.js'
import { Field } from '../ui/fields.js'
import { ErrorNote, Page, StatusNote } from '../ui/page.js'
import { useLoad } from '../ui/use-load.js'

interface Permission {
  id: string
  name: string
  slug: string
  description?: string
}

/** Permissions (what keys and roles grant): list, create, delete. */
export function PermissionsPage({ api }: { api: KeygateApi }) {
  const list = useLoad(() => api.get<Permission[]>('permissions.listPermissions', { limit: 100 }), [api])
  const [name, setName] = useState('')
  const [slug, setSlug] = useState('')
  const [description, setDescription] = useState('')
  const [status, setStatus] = useState<string>()
  const [error, setError] = useState<unknown>()
  const [deleting, setDeleting] = useState<Permission>()
  const create = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    try {
      await api.post('permissions.createPermission', {
        name: name.trim(),
        ...(slug.trim() ? { slug: slug.trim() } : {}),
        ...(description.trim() ? { description: description.trim() } : {}),
      })
      setStatus(`Created the permission ${name.trim()}.`)
      setName('')
      setSlug('')
      setDescription('')
      list.reload()
    } catch (err) {
      setError(err)
    }
  }
  return (
    <Page title="Permissions">
      <form aria-label="Create a permission" onSubmit={(event) => void create(event)}>
        <Field label="Name" value={name} onChange={setName} required placeholder="documents.read" />
        <Field label="Slug" value={slug} onChange={setSlug} hint="Empty: the name" />
        <Field label="Description" value={description} onChange={setDescription} />
        <button type="submit">Create permission</button>
        <ErrorNote error={error} />
      </form>
      <StatusNote text={status} />
      <ErrorNote error={list.error} />
      {list.data ? (
        <table>
          <caption class="visually-hidden">Permissions</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Slug</th>
              <th scope="col">Description</th>
              <th scope="col">Id</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((permission) => (
              <tr key={permission.id}>
                <td class="name">{permission.name}</td>
                <td class="mono">{permission.slug}</td>
                <td>{permission.description ?? ''}</td>
                <td class="mono">{permission.id}</td>
                <td>
                  <button type="button" class="secondary" onClick={() => setDeleting(permission)}>
                    Delete<span class="visually-hidden"> permission {permission.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {deleting ? (
        <ConfirmDialog
          title={`Delete the permission ${deleting.name}?`}
          confirmLabel="Delete permission"
          onClose={() => setDeleting(undefined)}
          onConfirm={async () => {
            await api.post('permissions.deletePermission', { permissionId: deleting.id })
            setStatus(`Deleted the permission ${deleting.name}.`)
            list.reload()
          }}
        >
          <p>Keys and roles that hold it lose it at once.</p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}
