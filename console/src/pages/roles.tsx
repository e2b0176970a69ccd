import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import type { Role } from '../types.js'
import { splitList } from '../format.js'
import { EntityTable } from '../ui/entity-table.js'
import { Field } from '../ui/fields.js'
import { Page, StatusNote, useStatus } from '../ui/page.js'
import { useRowConfirm } from '../ui/row-confirm.js'
import { useFormFields } from '../ui/use-form-fields.js'
import { useLoad } from '../ui/use-load.js'
import { EditSection, WriteForm } from '../ui/write-form.js'
import { useSubmit } from '../ui/use-submit.js'

const namesOf = (role: Role) => role.permissions.map((permission) => permission.name).join(', ')

/** Roles (named sets of permissions): list, create, edit their permissions, delete. */
export function RolesPage({ api }: { api: KeygateApi }) {
  const list = useLoad(() => api.get('permissions.listRoles', { limit: 100 }), [api])
  const [status, say] = useStatus(list.reload)
  const form = useFormFields({ name: '', description: '', permissions: '' })
  const creating = useSubmit(async () => {
    const { name, description } = form.values
    const names = splitList(form.values.permissions)
    await api.post('permissions.createRole', {
      name: name.trim(),
      ...(description.trim() ? { description: description.trim() } : {}),
      ...(names.length ? { permissions: names.map((permission) => ({ name: permission })) } : {}),
    })
    form.reset()
    say(`Created the role ${name.trim()}.`)
  })
  const [editing, setEditing] = useState<Role>()
  const remove = useRowConfirm(
    (role: Role) => ({
      title: `Delete the role ${role.name}?`,
      confirmLabel: 'Delete role',
      warning: 'Keys that hold it lose its permissions at once.',
      run: () => api.post('permissions.deleteRole', { roleId: role.id }),
      said: `Deleted the role ${role.name}.`,
    }),
    say,
  )
  return (
    <Page title="Roles">
      <WriteForm label="Create a role" submitLabel="Create role" submitting={creating}>
        <Field label="Name" {...form.field('name')} required placeholder="editor" />
        <Field label="Description" {...form.field('description')} />
        <Field label="Permissions" {...form.field('permissions')} hint="Names, separated by commas" />
      </WriteForm>
      <StatusNote text={status} />
      <EntityTable
        caption="Roles"
        rows={list.data}
        error={list.error}
        columns={[
          { header: 'Name', class: 'name', cell: (role) => role.name },
          { header: 'Description', cell: (role) => role.description ?? '' },
          { header: 'Permissions', cell: namesOf },
          { header: 'Id', class: 'mono', cell: (role) => role.id },
        ]}
        actions={(role) => [
          { label: 'Edit permissions', what: `of role ${role.name}`, onClick: () => setEditing(role) },
          { label: 'Delete', what: `role ${role.name}`, onClick: () => remove.open(role) },
        ]}
      />
      {editing ? (
        <RolePermissions
          api={api}
          role={editing}
          onDone={(saved) => {
            setEditing(undefined)
            if (saved) say(`Saved the permissions of ${editing.name}.`)
            else list.reload()
          }}
        />
      ) : null}
      {remove.dialog}
    </Page>
  )
}

function RolePermissions(props: { api: KeygateApi; role: Role; onDone: (saved: boolean) => void }) {
  const [text, setText] = useState(namesOf(props.role))
  const submitting = useSubmit(async () => {
    await props.api.post('permissions.setRolePermissions', {
      roleId: props.role.id,
      permissions: splitList(text).map((name) => ({ name })),
    })
    props.onDone(true)
  })
  return (
    <EditSection
      title={`Permissions of the role ${props.role.name}`}
      submitLabel="Save permissions"
      submitting={submitting}
      onCancel={() => props.onDone(false)}
    >
      <Field label="Permissions of the role" value={text} onChange={setText} hint="Names, separated by commas" />
    </EditSection>
  )
}
