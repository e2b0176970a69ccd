import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { splitList } from '../format.js'
import { ConfirmDialog } from '../ui/confirm.js'
import { Field } from '../ui/fields.js'
import { ErrorNote, Page, StatusNote } from '../ui/page.js'
import { useLoad } from '../ui/use-load.js'

interface Role {
  id: string
  name: string
  description?: string
  permissions: { id: string; name: string }[]
}

/** Roles (named sets of permissions): list, create, edit their permissions, delete. */
export function RolesPage({ api }: { api: KeygateApi }) {
  const list = useLoad(() => api.get<Role[]>('permissions.listRoles', { limit: 100 }), [api])
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [permissions, setPermissions] = useState('')
  const [status, setStatus] = useState<string>()
  const [error, setError] = useState<unknown>()
  const [editing, setEditing] = useState<Role>()
  const [deleting, setDeleting] = useState<Role>()
  const create = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    try {
      const names = splitList(permissions)
      await api.post('permissions.createRole', {
        name: name.trim(),
        ...(description.trim() ? { description: description.trim() } : {}),
        ...(names.length ? { permissions: names.map((permission) => ({ name: permission })) } : {}),
      })
      setStatus(`Created the role ${name.trim()}.`)
      setName('')
      setDescription('')
      setPermissions('')
      list.reload()
    } catch (err) {
      setError(err)
    }
  }
  return (
    <Page title="Roles">
      <form aria-label="Create a role" onSubmit={(event) => void create(event)}>
        <Field label="Name" value={name} onChange={setName} required placeholder="editor" />
        <Field label="Description" value={description} onChange={setDescription} />
        <Field label="Permissions" value={permissions} onChange={setPermissions} hint="Names, separated by commas" />
        <button type="submit">Create role</button>
        <ErrorNote error={error} />
      </form>
      <StatusNote text={status} />
      <ErrorNote error={list.error} />
      {list.data ? (
        <table>
          <caption class="visually-hidden">Roles</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Permissions</th>
              <th scope="col">Id</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((role) => (
              <tr key={role.id}>
                <td class="name">{role.name}</td>
                <td>{role.description ?? ''}</td>
                <td>{role.permissions.map((permission) => permission.name).join(', ')}</td>
                <td class="mono">{role.id}</td>
                <td class="actions">
                  <button type="button" class="secondary" onClick={() => setEditing(role)}>
                    Edit permissions<span class="visually-hidden"> of role {role.name}</span>
                  </button>
                  <button type="button" class="secondary" onClick={() => setDeleting(role)}>
                    Delete<span class="visually-hidden"> role {role.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {editing ? (
        <RolePermissions
          api={api}
          role={editing}
          onDone={(saved) => {
            setEditing(undefined)
            if (saved) setStatus(`Saved the permissions of ${editing.name}.`)
            list.reload()
          }}
        />
      ) : null}
      {deleting ? (
        <ConfirmDialog
          title={`Delete the role ${deleting.name}?`}
          confirmLabel="Delete role"
          onClose={() => setDeleting(undefined)}
          onConfirm={async () => {
            await api.post('permissions.deleteRole', { roleId: deleting.id })
            setStatus(`Deleted the role ${deleting.name}.`)
            list.reload()
          }}
        >
          <p>Keys that hold it lose its permissions at once.</p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}

function RolePermissions(props: { api: KeygateApi; role: Role; onDone: (saved: boolean) => void }) {
  const [text, setText] = useState(props.role.permissions.map((permission) => permission.name).join(', '))
  const [error, setError] = useState<unknown>()
  const submit = async (event: Event) => {
    event.preventDefault()
    try {
      await props.api.post('permissions.setRolePermissions', {
        roleId: props.role.id,
        permissions: splitList(text).map((name) => ({ name })),
      })
      props.onDone(true)
    } catch (err) {
      setError(err)
    }
  }
  return (
    <section aria-labelledby="role-permissions-title">
      <h2 id="role-permissions-title">Permissions of the role {props.role.name}</h2>
      <form aria-labelledby="role-permissions-title" onSubmit={(event) => void submit(event)}>
        <Field label="Permissions of the role" value={text} onChange={setText} hint="Names, separated by commas" />
        <button type="submit">Save permissions</button>
        <button type="button" class="secondary" onClick={() => props.onDone(false)}>
          Cancel
        </button>
        <ErrorNote error={error} />
      </form>
    </section>
  )
}
