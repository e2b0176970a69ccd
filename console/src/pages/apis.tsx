import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { formatTime } from '../format.js'
import { hrefOf, navigate } from '../router.js'
import { ConfirmDialog } from '../ui/confirm.js'
import { Field } from '../ui/fields.js'
import { ErrorNote, Page, StatusNote } from '../ui/page.js'
import { Pager, useCursorPages } from '../ui/pager.js'
import { useLoad } from '../ui/use-load.js'

export interface ListedApi {
  id: string
  name: string
  createdAt: number
}

const PAGE_SIZE = 50

/** Apis: the list (apis.listApis), creating one, and deleting one once its name is typed. */
export function ApisPage({ api }: { api: KeygateApi }) {
  const pages = useCursorPages()
  const apis = useLoad(
    () => api.get<{ apis: ListedApi[]; cursor?: string }>('apis.listApis', { limit: PAGE_SIZE, cursor: pages.cursor }),
    [api, pages.cursor],
  )
  const [status, setStatus] = useState<string>()
  const [deleting, setDeleting] = useState<ListedApi>()
  return (
    <Page title="Apis">
      <CreateApi
        api={api}
        onCreated={(created) => {
          setStatus(`Created the api ${created.name} (${created.apiId}).`)
          apis.reload()
        }}
      />
      <OpenApi />
      <StatusNote text={status} />
      <ErrorNote error={apis.error} />
      {apis.data ? (
        apis.data.apis.length === 0 && pages.page === 1 ? (
          <p class="muted">No apis yet: create one above.</p>
        ) : (
          <table>
            <caption class="visually-hidden">Apis</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Id</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {apis.data.apis.map((row) => (
                <tr key={row.id}>
                  <td class="name">
                    <a href={hrefOf({ page: 'keys', apiId: row.id })}>{row.name}</a>
                  </td>
                  <td class="mono">{row.id}</td>
                  <td>{formatTime(row.createdAt)}</td>
                  <td>
                    <button type="button" class="secondary" onClick={() => setDeleting(row)}>
                      Delete<span class="visually-hidden"> api {row.name}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
      <Pager
        what="apis"
        page={pages.page}
        nextCursor={apis.data?.cursor}
        onNext={pages.next}
        onPrevious={pages.previous}
      />
      {deleting ? (
        <ConfirmDialog
          title={`Delete the api ${deleting.name}?`}
          confirmLabel="Delete api"
          typeToConfirm={deleting.name}
          onClose={() => setDeleting(undefined)}
          onConfirm={async () => {
            await api.post('apis.deleteApi', { apiId: deleting.id })
            setStatus(`Deleted the api ${deleting.name}: its keys no longer verify.`)
            apis.reload()
          }}
        >
          <p>Every key of this api stops verifying at once, and is deleted. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}

function CreateApi(props: { api: KeygateApi; onCreated: (created: { apiId: string; name: string }) => void }) {
  const [name, setName] = useState('')
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    setBusy(true)
    setError(undefined)
    try {
      const created = await props.api.post<{ apiId: string; name: string }>('apis.createApi', { name: name.trim() })
      setName('')
      props.onCreated(created)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form aria-label="Create an api" onSubmit={(event) => void submit(event)}>
      <Field label="Name" value={name} onChange={setName} required placeholder="payments" />
      <button type="submit" disabled={busy}>
        Create API
      </button>
      <ErrorNote error={error} />
    </form>
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
