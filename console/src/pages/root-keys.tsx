import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import type { RootKey } from '../types.js'
import { formatTime, splitList } from '../format.js'
import { EntityTable } from '../ui/entity-table.js'
import { Field } from '../ui/fields.js'
import { Page, StatusNote, useStatus } from '../ui/page.js'
import { Pager } from '../ui/pager.js'
import { useRowConfirm } from '../ui/row-confirm.js'
import { ShownOnce } from '../ui/shown-once.js'
import { useFormFields } from '../ui/use-form-fields.js'
import { usePagedLoad } from '../ui/use-paged-load.js'
import { WriteForm } from '../ui/write-form.js'
import { useSubmit } from '../ui/use-submit.js'

/** Root keys: list, create (the key shown once), revoke. Keygate lets a root key make none stronger than itself. */
export function RootKeysPage({ api }: { api: KeygateApi }) {
  const list = usePagedLoad((cursor) => api.get('rootKeys.listRootKeys', { limit: 50, cursor }), [api])
  const [status, say] = useStatus(list.reload)
  const form = useFormFields({ name: '', permissions: '' })
  const [created, setCreated] = useState<string>()
  const creating = useSubmit(async () => {
    const name = form.values.name.trim()
    const made = await api.post('rootKeys.createRootKey', {
      ...(name ? { name } : {}),
      permissions: splitList(form.values.permissions),
    })
    setCreated(made.key)
    form.reset()
    say(`Created the root key ${made.rootKeyId}.`)
  })
  const revoke = useRowConfirm(
    (rootKey: RootKey) => ({
      title: `Revoke the root key ${rootKey.name ?? rootKey.id}?`,
      confirmLabel: 'Revoke root key',
      warning: 'Every call made with it is refused from now on. This cannot be undone.',
      run: () => api.post('rootKeys.revokeRootKey', { rootKeyId: rootKey.id }),
      said: `Revoked the root key ${rootKey.name ?? rootKey.id}: its next call is refused.`,
    }),
    say,
  )
  return (
    <Page title="Root keys">
      {created ? <ShownOnce label="New root key" secret={created} onDone={() => setCreated(undefined)} /> : null}
      <WriteForm label="Create a root key" submitLabel="Create root key" submitting={creating}>
        <Field label="Name" {...form.field('name')} placeholder="deploy bot" />
        <Field
          label="Permissions"
          {...form.field('permissions')}
          required
          hint="e.g. api.*.read_key, api.api_123.create_key (or * for everything)"
        />
      </WriteForm>
      <StatusNote text={status} />
      <EntityTable
        caption="Root keys"
        rows={list.data?.rootKeys}
        error={list.error}
        columns={[
          { header: 'Name', class: 'name', cell: (rootKey) => rootKey.name ?? '' },
          { header: 'Id', class: 'mono', cell: (rootKey) => rootKey.id },
          { header: 'Start', class: 'mono', cell: (rootKey) => (rootKey.start ? `${rootKey.start}…` : '') },
          { header: 'Permissions', class: 'mono', cell: (rootKey) => rootKey.permissions.join(', ') },
          { header: 'Created', cell: (rootKey) => formatTime(rootKey.createdAt) },
          { header: 'Last used', cell: (rootKey) => (rootKey.lastUsedAt ? formatTime(rootKey.lastUsedAt) : 'never') },
        ]}
        actions={(rootKey) => [
          { label: 'Revoke', what: `root key ${rootKey.name ?? rootKey.id}`, onClick: () => revoke.open(rootKey) },
        ]}
      />
      <Pager what="root keys" {...list.pager} />
      {revoke.dialog}
    </Page>
  )
}
