import type { KeygateApi } from '../api.js'
import type { Permission } from '../types.js'
import { EntityTable } from '../ui/entity-table.js'
import { Field } from '../ui/fields.js'
import { Page, StatusNote, useStatus } from '../ui/page.js'
import { useRowConfirm } from '../ui/row-confirm.js'
import { useFormFields } from '../ui/use-form-fields.js'
import { useLoad } from '../ui/use-load.js'
import { WriteForm } from '../ui/write-form.js'
import { useSubmit } from '../ui/use-submit.js'

/** Permissions (what keys and roles grant): list, create, delete. */
export function PermissionsPage({ api }: { api: KeygateApi }) {
  const list = useLoad(() => api.get('permissions.listPermissions', { limit: 100 }), [api])
  const [status, say] = useStatus(list.reload)
  const form = useFormFields({ name: '', slug: '', description: '' })
  const creating = useSubmit(async () => {
    const { name, slug, description } = form.values
    await api.post('permissions.createPermission', {
      name: name.trim(),
      ...(slug.trim() ? { slug: slug.trim() } : {}),
      ...(description.trim() ? { description: description.trim() } : {}),
    })
    form.reset()
    say(`Created the permission ${name.trim()}.`)
  })
  const remove = useRowConfirm(
    (permission: Permission) => ({
      title: `Delete the permission ${permission.name}?`,
      confirmLabel: 'Delete permission',
      warning: 'Keys and roles that hold it lose it at once.',
      run: () => api.post('permissions.deletePermission', { permissionId: permission.id }),
      said: `Deleted the permission ${permission.name}.`,
    }),
    say,
  )
  return (
    <Page title="Permissions">
      <WriteForm label="Create a permission" submitLabel="Create permission" submitting={creating}>
        <Field label="Name" {...form.field('name')} required placeholder="documents.read" />
        <Field label="Slug" {...form.field('slug')} hint="Empty: the name" />
        <Field label="Description" {...form.field('description')} />
      </WriteForm>
      <StatusNote text={status} />
      <EntityTable
        caption="Permissions"
        rows={list.data}
        error={list.error}
        columns={[
          { header: 'Name', class: 'name', cell: (permission) => permission.name },
          { header: 'Slug', class: 'mono', cell: (permission) => permission.slug },
          { header: 'Description', cell: (permission) => permission.description ?? '' },
          { header: 'Id', class: 'mono', cell: (permission) => permission.id },
        ]}
        actions={(permission) => [
          { label: 'Delete', what: `permission ${permission.name}`, onClick: () => remove.open(permission) },
        ]}
      />
      {remove.dialog}
    </Page>
  )
}
