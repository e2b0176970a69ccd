import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { countOf } from '../format.js'
import { hrefOf } from '../router.js'
import type { NewKey } from '../types.js'
import { ConfirmDialog } from '../ui/confirm.js'
import { Field } from '../ui/fields.js'
import { ErrorNote, Page, StatusNote } from '../ui/page.js'
import { Pager, useCursorPages } from '../ui/pager.js'
import { ShownOnce } from '../ui/shown-once.js'
import { useLoad } from '../ui/use-load.js'
import { UsageChart } from '../usage/usage-chart.js'
import { CreateKey } from './create-key.js'
import { searchKeys } from './key-search.js'
import { KeyTable } from './key-table.js'

const PAGE_SIZE = 50
const NONE: ReadonlySet<string> = new Set()

/**
 * The keys of an api: its usage by outcome, search, a page at a time on the API's cursor, create (shown once), bulk
 * disable and delete.
 */
export function KeysPage({ api, apiId }: { api: KeygateApi; apiId: string }) {
  const info = useLoad(() => api.get('apis.getApi', { apiId }), [api, apiId])
  const pages = useCursorPages()
  const [typed, setTyped] = useState('')
  const [search, setSearch] = useState('')
  const keys = useLoad(async () => {
    if (search) {
      const step = await searchKeys(api, apiId, search, pages.cursor)
      return { keys: step.keys, cursor: step.cursor, scanned: step.scanned, total: undefined }
    }
    const page = await api.get('apis.listKeys', { apiId, limit: PAGE_SIZE, cursor: pages.cursor })
    return { ...page, scanned: undefined }
  }, [api, apiId, search, pages.cursor])
  // The selection belongs to the keys on screen when it was made: another page, a search or a reload starts with
  // none, so that the bulk actions never reach keys the admin no longer sees.
  const [selection, setSelection] = useState<{ of: typeof keys.data; ids: Set<string> }>()
  const selected = selection && selection.of === keys.data ? selection.ids : NONE
  const setSelected = (ids: Set<string>) => setSelection({ of: keys.data, ids })
  const [created, setCreated] = useState<NewKey>()
  const [status, setStatus] = useState<string>()
  const [bulkError, setBulkError] = useState<unknown>()
  const [confirmDelete, setConfirmDelete] = useState(false)

  const refresh = () => {
    setSelection(undefined)
    keys.reload()
  }
  const disableSelected = async () => {
    setBulkError(undefined)
    const ids = [...selected]
    const results = await Promise.allSettled(ids.map((keyId) => api.post('keys.updateKey', { keyId, enabled: false })))
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected')
    if (failed) setBulkError(failed.reason)
    setStatus(`Disabled ${results.filter((result) => result.status === 'fulfilled').length} of ${ids.length} keys.`)
    refresh()
  }
  const title = info.data ? `Keys of ${info.data.name}` : 'Keys'
  return (
    <Page title={title}>
      <p class="muted">
        <a href={hrefOf({ page: 'apis' })}>Apis</a> / <span class="mono">{apiId}</span>
      </p>
      <ErrorNote error={info.error} />
      {created ? (
        <ShownOnce label="New key" secret={created.key} onDone={() => setCreated(undefined)}>
          <a href={hrefOf({ page: 'key', keyId: created.keyId })}>Open key {created.keyId}</a>
        </ShownOnce>
      ) : null}
      <CreateKey
        api={api}
        apiId={apiId}
        onCreated={(made) => {
          setCreated(made)
          setStatus(`Created the key ${made.keyId}.`)
          refresh()
        }}
      />
      <h2>Keys</h2>
      <form
        role="search"
        aria-label="Key search"
        onSubmit={(event) => {
          event.preventDefault()
          pages.first()
          setSearch(typed.trim())
        }}
      >
        <Field
          label="Search keys"
          type="search"
          value={typed}
          onChange={setTyped}
          hint="Name, owner (externalId), key id or start"
        />
        <button type="submit" class="secondary">
          Search
        </button>
        {search ? (
          <button
            type="button"
            class="link"
            onClick={() => {
              setTyped('')
              setSearch('')
              pages.first()
            }}
          >
            Show every key
          </button>
        ) : null}
      </form>
      <div class="actions" role="group" aria-label="With the selected keys">
        <button type="button" class="secondary" disabled={selected.size === 0} onClick={() => void disableSelected()}>
          Disable selected
        </button>
        <button type="button" class="danger" disabled={selected.size === 0} onClick={() => setConfirmDelete(true)}>
          Delete selected
        </button>
        <span class="muted">{selected.size > 0 ? `${selected.size} selected` : ''}</span>
      </div>
      <StatusNote text={status} />
      <ErrorNote error={bulkError ?? keys.error} />
      {keys.data ? (
        <>
          <p class="muted" aria-live="polite">
            {keys.data.total !== undefined
              ? `${countOf(keys.data.total, 'key')} in this api.`
              : `${keys.data.keys.length} matching among ${countOf(keys.data.scanned, 'key')} searched${keys.data.cursor ? ': more remain, search further with Next page' : ''}.`}
          </p>
          {keys.data.keys.length > 0 ? (
            <KeyTable keys={keys.data.keys} selected={selected} onSelect={setSelected} />
          ) : null}
        </>
      ) : null}
      <Pager
        what="keys"
        page={pages.page}
        nextCursor={keys.data?.cursor}
        onNext={pages.next}
        onPrevious={pages.previous}
      />
      <UsageChart api={api} scope={{ kind: 'api', id: apiId }} />
      {confirmDelete ? (
        <ConfirmDialog
          title={`Delete ${selected.size} keys?`}
          confirmLabel="Delete keys"
          onClose={() => setConfirmDelete(false)}
          onConfirm={async () => {
            const ids = [...selected]
            const results = await Promise.allSettled(ids.map((keyId) => api.post('keys.deleteKey', { keyId })))
            const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected')
            setStatus(
              `Deleted ${results.filter((result) => result.status === 'fulfilled').length} of ${ids.length} keys.`,
            )
            refresh()
            if (failed) throw failed.reason
          }}
        >
          <p>They stop verifying at once. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}
