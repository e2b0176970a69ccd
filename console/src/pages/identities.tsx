import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { formatJson } from '../format.js'
import { parseJsonObject, parseRatelimits } from '../json-input.js'
import type { Identity, ListedIdentity } from '../types.js'
import { hrefOf } from '../router.js'
import { EntityTable } from '../ui/entity-table.js'
import { Field } from '../ui/fields.js'
import { ErrorNote, Page, StatusNote, useStatus } from '../ui/page.js'
import { Pager } from '../ui/pager.js'
import { useRowConfirm } from '../ui/row-confirm.js'
import { useFormFields } from '../ui/use-form-fields.js'
import { useLoad } from '../ui/use-load.js'
import { usePagedLoad } from '../ui/use-paged-load.js'
import { EditSection, WriteForm } from '../ui/write-form.js'
import { useSubmit } from '../ui/use-submit.js'

/** Identities (users or organisations whose keys share meta and rate limits): list, create, edit, delete. */
export function IdentitiesPage({ api }: { api: KeygateApi }) {
  const list = usePagedLoad(
    (cursor) =>
      api.get('identities.listIdentities', {
        limit: 50,
        cursor,
      }),
    [api],
  )
  const [status, say] = useStatus(list.reload)
  const [editing, setEditing] = useState<string>()
  const remove = useRowConfirm(
    (identity: ListedIdentity) => ({
      title: `Delete the identity ${identity.externalId}?`,
      confirmLabel: 'Delete identity',
      warning: 'Its keys keep their externalId and lose its meta and rate limits.',
      run: () => api.post('identities.deleteIdentity', { identityId: identity.id }),
      said: `Deleted the identity ${identity.externalId}.`,
    }),
    say,
  )
  return (
    <Page title="Identities">
      <IdentityForm api={api} onSaved={(externalId) => say(`Created the identity ${externalId}.`)} />
      <StatusNote text={status} />
      <EntityTable
        caption="Identities"
        rows={list.data?.identities}
        error={list.error}
        columns={[
          {
            header: 'External id',
            class: 'name',
            cell: (identity) => (
              <a href={hrefOf({ page: 'identity', identityId: identity.id })}>{identity.externalId}</a>
            ),
          },
          { header: 'Id', class: 'mono', cell: (identity) => identity.id },
          {
            header: 'Rate limits',
            cell: (identity) =>
              identity.ratelimits.map((limit) => `${limit.name}: ${limit.limit}/${limit.duration} ms`).join('; '),
          },
        ]}
        actions={(identity) => [
          { label: 'Edit', what: `identity ${identity.externalId}`, onClick: () => setEditing(identity.id) },
          { label: 'Delete', what: `identity ${identity.externalId}`, onClick: () => remove.open(identity) },
        ]}
      />
      <Pager what="identities" {...list.pager} />
      {editing ? (
        <EditIdentity
          api={api}
          identityId={editing}
          onDone={(saved) => {
            setEditing(undefined)
            if (saved) say('Saved the identity: its keys follow.')
            else list.reload()
          }}
        />
      ) : null}
      {remove.dialog}
    </Page>
  )
}

function IdentityForm(props: { api: KeygateApi; onSaved: (externalId: string) => void }) {
  const form = useFormFields({ externalId: '', meta: '', limits: '' })
  const parsedMeta = parseJsonObject(form.values.meta)
  const parsedLimits = parseRatelimits(form.values.limits)
  const submitting = useSubmit(async () => {
    const externalId = form.values.externalId.trim()
    await props.api.post('identities.createIdentity', {
      externalId,
      ...(parsedMeta.value ? { meta: parsedMeta.value } : {}),
      ...(parsedLimits.value?.length ? { ratelimits: parsedLimits.value } : {}),
    })
    form.reset()
    props.onSaved(externalId)
  }, !parsedMeta.problem && !parsedLimits.problem)
  return (
    <WriteForm label="Create an identity" submitLabel="Create identity" submitting={submitting}>
      <Field label="External id" {...form.field('externalId')} required hint="Your user or organisation id" />
      <Field label="Meta (JSON object)" {...form.field('meta')} multiline problem={parsedMeta.problem} />
      <Field
        label="Rate limits (JSON list)"
        {...form.field('limits')}
        multiline
        problem={parsedLimits.problem}
        placeholder='[{"name": "requests", "limit": 100, "duration": 60000}]'
      />
    </WriteForm>
  )
}

function EditIdentity(props: { api: KeygateApi; identityId: string; onDone: (saved: boolean) => void }) {
  const identity = useLoad(
    () => props.api.get('identities.getIdentity', { identityId: props.identityId }),
    [props.api, props.identityId],
  )
  if (!identity.data) return <ErrorNote error={identity.error} />
  return <IdentityEditor api={props.api} identity={identity.data} onDone={props.onDone} />
}

function IdentityEditor(props: { api: KeygateApi; identity: Identity; onDone: (saved: boolean) => void }) {
  const { identity } = props
  const [meta, setMeta] = useState(identity.meta ? formatJson(identity.meta) : '')
  const [limits, setLimits] = useState(formatJson(identity.ratelimits))
  const parsedMeta = parseJsonObject(meta)
  const parsedLimits = parseRatelimits(limits)
  const submitting = useSubmit(async () => {
    await props.api.post('identities.updateIdentity', {
      identityId: identity.id,
      meta: parsedMeta.value ?? {},
      ratelimits: parsedLimits.value ?? [],
    })
    props.onDone(true)
  }, !parsedMeta.problem && !parsedLimits.problem)
  return (
    <EditSection
      title={`Edit the identity ${identity.externalId}`}
      submitLabel="Save identity"
      submitting={submitting}
      onCancel={() => props.onDone(false)}
    >
      <Field label="Meta (JSON object)" value={meta} onChange={setMeta} multiline problem={parsedMeta.problem} />
      <Field
        label="Rate limits (JSON list)"
        value={limits}
        onChange={setLimits}
        multiline
        problem={parsedLimits.problem}
      />
    </EditSection>
  )
}
