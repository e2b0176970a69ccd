import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { formatTime } from '../format.js'
import type { ConsoleAnswers, ListedApi } from '../types.js'
import { hrefOf, navigate } from '../router.js'
import { EntityTable } from '../ui/entity-table.js'
import { Field } from '../ui/fields.js'
import { Page, StatusNote, useStatus } from '../ui/page.js'
import { Pager } from '../ui/pager.js'
import { useRowConfirm } from '../ui/row-confirm.js'
import { usePagedLoad } from '../ui/use-paged-load.js'
import { WriteForm } from '../ui/write-form.js'
import { useSubmit } from '../ui/use-submit.js'

const PAGE_SIZE = 50

/** Apis: the list (apis.listApis), creating one, and deleting one once its name is typed. */
export function ApisPage({ api }: { api: KeygateApi }) {
  const list = usePagedLoad((cursor) => api.get('apis.listApis', { limit: PAGE_SIZE, cursor }), [api])
  const [status, say] = useStatus(list.reload)
  const remove = useRowConfirm(
    (row: ListedApi) => ({
      title: `Delete the api ${row.name}?`,
      confirmLabel: 'Delete api',
      typeToConfirm: row.name,
      warning: 'Every key of this api stops verifying at once, and is deleted. This cannot be undone.',
      run: () => api.post('apis.deleteApi', { apiId: row.id }),
      said: `Deleted the api ${row.name}: its keys no longer verify.`,
    }),
    say,
  )
  return (
    <Page title="Apis">
      <CreateApi api={api} onCreated={(created) => say(`Created the api ${created.name} (${created.apiId}).`)} />
      <OpenApi />
      <StatusNote text={status} />
      <EntityTable
        caption="Apis"
        rows={list.data?.apis}
        error={list.error}
        empty={list.pager.page === 1 ? 'No apis yet: create one above.' : undefined}
        columns={[
          {
            header: 'Name',
            class: 'name',
            cell: (row) => <a href={hrefOf({ page: 'keys', apiId: row.id })}>{row.name}</a>,
          },
          { header: 'Id', class: 'mono', cell: (row) => row.id },
          { header: 'Created', cell: (row) => formatTime(row.createdAt) },
        ]}
        actions={(row) => [{ label: 'Delete', what: `api ${row.name}`, onClick: () => remove.open(row) }]}
      />
      <Pager what="apis" {...list.pager} />
      {remove.dialog}
    </Page>
  )
}

function CreateApi(props: { api: KeygateApi; onCreated: (created: ConsoleAnswers['apis.createApi']) => void }) {
  const [name, setName] = useState('')
  const submitting = useSubmit(async () => {
    const created = await props.api.post('apis.createApi', { name: name.trim() })
    setName('')
    props.onCreated(created)
  })
  return (
    <WriteForm label="Create an api" submitLabel="Create API" submitting={submitting}>
      <Field label="Name" value={name} onChange={setName} required placeholder="payments" />
    </WriteForm>
  )
}

/** Opening an api by its id: what a root key scoped to some apis does, since listing them all needs api.*.read_api. */
function OpenApi() {
  const [apiId, setApiId] = useState('')
  return (
    <form
      aria-label="Open an api by id"
      onSubmit={(event) => {
        event.preventDefault()
        if (apiId.trim()) navigate({ page: 'keys', apiId: apiId.trim() })
      }}
    >
      <Field label="Api id" value={apiId} onChange={setApiId} placeholder="api_…" />
      <button type="submit" class="secondary">
        Open api
      </button>
    </form>
  )
}
