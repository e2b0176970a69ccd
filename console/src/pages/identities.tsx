import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { formatJson } from '../format.js'
import type { NamedRateLimit } from '../types.js'
import { ConfirmDialog } from '../ui/confirm.js'
import { parseJsonObject, parseRatelimits } from '../json-input.js'
import { Field } from '../ui/fields.js'
import { ErrorNote, Page, StatusNote } from '../ui/page.js'
import { Pager, useCursorPages } from '../ui/pager.js'
import { useLoad } from '../ui/use-load.js'

interface Identity {
  id: string
  externalId: string
  meta?: Record<string, unknown>
  ratelimits: NamedRateLimit[]
}

/** Identities (users or organisations whose keys share meta and rate limits): list, create, edit, delete. */
export function IdentitiesPage({ api }: { api: KeygateApi }) {
  const pages = useCursorPages()
  const list = useLoad(
    () =>
      api.get<{ identities: Identity[]; total: number; cursor?: string }>('identities.listIdentities', {
        limit: 50,
        cursor: pages.cursor,
      }),
    [api, pages.cursor],
  )
  const [status, setStatus] = useState<string>()
  const [editing, setEditing] = useState<string>()
  const [deleting, setDeleting] = useState<Identity>()
  return (
    <Page title="Identities">
      <IdentityForm
        api={api}
        onSaved={(externalId) => {
          setStatus(`Created the identity ${externalId}.`)
          list.reload()
        }}
      />
      <StatusNote text={status} />
      <ErrorNote error={list.error} />
      {list.data ? (
        <table>
          <caption class="visually-hidden">Identities</caption>
          <thead>
            <tr>
              <th scope="col">External id</th>
              <th scope="col">Id</th>
              <th scope="col">Rate limits</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.identities.map((identity) => (
              <tr key={identity.id}>
                <td class="name">{identity.externalId}</td>
                <td class="mono">{identity.id}</td>
                <td>
                  {identity.ratelimits.map((limit) => `${limit.name}: ${limit.limit}/${limit.duration} ms`).join('; ')}
                </td>
                <td class="actions">
                  <button type="button" class="secondary" onClick={() => setEditing(identity.id)}>
                    Edit<span class="visually-hidden"> identity {identity.externalId}</span>
                  </button>
                  <button type="button" class="secondary" onClick={() => setDeleting(identity)}>
                    Delete<span class="visually-hidden"> identity {identity.externalId}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Pager
        what="identities"
        page={pages.page}
        nextCursor={list.data?.cursor}
        onNext={pages.next}
        onPrevious={pages.previous}
      />
      {editing ? (
        <EditIdentity
          api={api}
          identityId={editing}
          onDone={(saved) => {
            setEditing(undefined)
            if (saved) setStatus('Saved the identity: its keys follow.')
            list.reload()
          }}
        />
      ) : null}
      {deleting ? (
        <ConfirmDialog
          title={`Delete the identity ${deleting.externalId}?`}
          confirmLabel="Delete identity"
          onClose={() => setDeleting(undefined)}
          onConfirm={async () => {
            await api.post('identities.deleteIdentity', { identityId: deleting.id })
            setStatus(`Deleted the identity ${deleting.externalId}.`)
            list.reload()
          }}
        >
          <p>Its keys keep their externalId and lose its meta and rate limits.</p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}

function IdentityForm(props: { api: KeygateApi; onSaved: (externalId: string) => void }) {
  const [externalId, setExternalId] = useState('')
  const [meta, setMeta] = useState('')
  const [limits, setLimits] = useState('')
  const [error, setError] = useState<unknown>()
  const parsedMeta = parseJsonObject(meta)
  const parsedLimits = parseRatelimits(limits)
  const submit = async (event: Event) => {
    event.preventDefault()
    if (parsedMeta.problem || parsedLimits.problem) return
    setError(undefined)
    try {
      await props.api.post('identities.createIdentity', {
        externalId: externalId.trim(),
        ...(parsedMeta.value ? { meta: parsedMeta.value } : {}),
        ...(parsedLimits.value?.length ? { ratelimits: parsedLimits.value } : {}),
      })
      setExternalId('')
      setMeta('')
      setLimits('')
      props.onSaved(externalId.trim())
    } catch (err) {
      setError(err)
    }
  }
  return (
    <form aria-label="Create an identity" onSubmit={(event) => void submit(event)}>
      <Field
        label="External id"
        value={externalId}
        onChange={setExternalId}
        required
        hint="Your user or organisation id"
      />
      <Field label="Meta (JSON object)" value={meta} onChange={setMeta} multiline problem={parsedMeta.problem} />
      <Field
        label="Rate limits (JSON list)"
        value={limits}
        onChange={setLimits}
        multiline
        problem={parsedLimits.problem}
        placeholder='[{"name": "requests", "limit": 100, "duration": 60000}]'
      />
      <button type="submit">Create identity</button>
      <ErrorNote error={error} />
    </form>
  )
}

function EditIdentity(props: { api: KeygateApi; identityId: string; onDone: (saved: boolean) => void }) {
  const identity = useLoad(
    () => props.api.get<Identity>('identities.getIdentity', { identityId: props.identityId }),
    [props.api, props.identityId],
  )
  const [meta, setMeta] = useState<string>()
  const [limits, setLimits] = useState<string>()
  const [error, setError] = useState<unknown>()
  if (!identity.data) return <ErrorNote error={identity.error} />
  const metaText = meta ?? (identity.data.meta ? formatJson(identity.data.meta) : '')
  const limitsText = limits ?? formatJson(identity.data.ratelimits)
  const parsedMeta = parseJsonObject(metaText)
  const parsedLimits = parseRatelimits(limitsText)
  const submit = async (event: Event) => {
    event.preventDefault()
    if (parsedMeta.problem || parsedLimits.problem) return
    try {
      await props.api.post('identities.updateIdentity', {
        identityId: props.identityId,
        meta: parsedMeta.value ?? {},
        ratelimits: parsedLimits.value ?? [],
      })
      props.onDone(true)
    } catch (err) {
      setError(err)
    }
  }
  return (
    <section aria-labelledby="edit-identity-title">
      <h2 id="edit-identity-title">Edit the identity {identity.data.externalId}</h2>
      <form aria-labelledby="edit-identity-title" onSubmit={(event) => void submit(event)}>
        <Field label="Meta (JSON object)" value={metaText} onChange={setMeta} multiline problem={parsedMeta.problem} />
        <Field
          label="Rate limits (JSON list)"
          value={limitsText}
          onChange={setLimits}
          multiline
          problem={parsedLimits.problem}
        />
        <button type="submit">Save identity</button>
        <button type="button" class="secondary" onClick={() => props.onDone(false)}>
          Cancel
        </button>
        <ErrorNote error={error} />
      </form>
    </section>
  )
}
