import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { formatCredits, formatDuration, formatExpiry, formatJson, formatTime } from '../format.js'
import { hrefOf, navigate } from '../router.js'
import type { Key, NewKey } from '../types.js'
import { ConfirmDialog } from '../ui/confirm.js'
import { ErrorNote, Fields, Page, StatusNote } from '../ui/page.js'
import { ShownOnce } from '../ui/shown-once.js'
import { useLoad } from '../ui/use-load.js'
import { UsageChart } from '../usage/usage-chart.js'
import { UsageThresholds } from '../usage/usage-thresholds.js'
import { AuditTable } from './audit-table.js'
import { EditKey } from './edit-key.js'
import { KeyState } from './key-table.js'
import { RerollKey } from './reroll-key.js'

/** A key: its fields, the actions on it, its usage by outcome and its audit entries. */
export function KeyPageView({ api, keyId }: { api: KeygateApi; keyId: string }) {
  const key = useLoad(() => api.get('keys.getKey', { keyId }), [api, keyId])
  const audit = useLoad(() => api.get('audit.list', { keyId, limit: 20 }), [api, keyId, key.data])
  const [status, setStatus] = useState<string>()
  const [error, setError] = useState<unknown>()
  const [rerolled, setRerolled] = useState<NewKey>()
  const [deleting, setDeleting] = useState(false)
  const [panel, setPanel] = useState<'edit' | 'reroll'>()
  // Opening or closing a panel clears what the last action said: a "Saved." beside a form not saved yet would mislead.
  const toggle = (which: 'edit' | 'reroll') => {
    setStatus(undefined)
    setPanel(panel === which ? undefined : which)
  }
  const record = key.data
  const title = record ? `Key ${record.name ?? record.id}` : 'Key'

  const setEnabled = async (enabled: boolean) => {
    setError(undefined)
    try {
      await api.post('keys.updateKey', { keyId, enabled })
      setStatus(enabled ? 'Enabled: the key verifies again.' : 'Disabled: the key no longer verifies.')
      key.reload()
    } catch (err) {
      setError(err)
    }
  }

  return (
    <Page title={title}>
      <ErrorNote error={key.error} />
      {record ? (
        <>
          <p class="muted">
            <a href={hrefOf({ page: 'apis' })}>Apis</a> /{' '}
            <a href={hrefOf({ page: 'keys', apiId: record.apiId })}>{record.apiId}</a> /{' '}
            <span class="mono">{keyId}</span>
          </p>
          <div class="actions" role="group" aria-label="Key actions">
            {record.enabled ? (
              <button type="button" class="secondary" onClick={() => void setEnabled(false)}>
                Disable key
              </button>
            ) : (
              <button type="button" onClick={() => void setEnabled(true)}>
                Enable key
              </button>
            )}
            <button type="button" class="secondary" aria-expanded={panel === 'edit'} onClick={() => toggle('edit')}>
              Edit key
            </button>
            <button type="button" class="secondary" aria-expanded={panel === 'reroll'} onClick={() => toggle('reroll')}>
              Reroll key
            </button>
            <button type="button" class="danger" onClick={() => setDeleting(true)}>
              Delete key
            </button>
          </div>
          <StatusNote text={status} />
          <ErrorNote error={error} />
          {rerolled ? (
            <ShownOnce label="New key" secret={rerolled.key} onDone={() => setRerolled(undefined)}>
              <a href={hrefOf({ page: 'key', keyId: rerolled.keyId })}>Open the new key {rerolled.keyId}</a>
            </ShownOnce>
          ) : null}
          {panel === 'reroll' ? (
            <RerollKey
              api={api}
              keyId={keyId}
              onRerolled={(made, graceMs) => {
                setPanel(undefined)
                setRerolled(made)
                setStatus(
                  graceMs > 0
                    ? `Rerolled: this key keeps working for ${formatDuration(graceMs)}, then only the new one does.`
                    : 'Rerolled: this key no longer works; the new one does.',
                )
                key.reload()
              }}
            />
          ) : null}
          {panel === 'edit' ? (
            <EditKey
              api={api}
              keyRecord={record}
              onSaved={(changed) => {
                setPanel(undefined)
                setStatus(changed ? 'Saved.' : 'Nothing to save: no field was changed.')
                key.reload()
              }}
            />
          ) : null}
          <KeyFields record={record} />
          <UsageChart api={api} scope={{ kind: 'key', id: keyId }} />
          <UsageThresholds
            thresholds={record.usageThresholds ?? []}
            save={async (usageThresholds) => {
              await api.post('keys.updateKey', { keyId, usageThresholds })
              key.reload()
            }}
          />
          <h2>Audit entries</h2>
          <ErrorNote error={audit.error} />
          {audit.data ? <AuditTable entries={audit.data.entries} /> : null}
          {audit.data?.cursor ? (
            <p>
              <a href={hrefOf({ page: 'audit', keyId })}>Older entries of this key in the audit log</a>
            </p>
          ) : null}
        </>
      ) : null}
      {deleting && record ? (
        <ConfirmDialog
          title={`Delete the key ${record.name ?? record.id}?`}
          confirmLabel="Delete key"
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await api.post('keys.deleteKey', { keyId })
            navigate({ page: 'keys', apiId: record.apiId })
          }}
        >
          <p>It stops verifying at once. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}

/**
 * Where and when the key was reported leaked. The place is shown as text, never a link: a reporter names it, and a
 * `javascript:` URL must not become something to click.
 */
function LeakNote({ leaked }: { leaked: NonNullable<Key['leaked']> }) {
  const done = { notify: 'kept enabled', disable: 'disabled', delete: 'deleted' }[leaked.action]
  return (
    <span>
      {formatTime(leaked.at)}, reported by <span class="mono">{leaked.reporter}</span> ({done})
      {leaked.url ? (
        <>
          {' '}
          at <span class="mono">{leaked.url}</span>
        </>
      ) : null}
      {leaked.source ? ` (${leaked.source})` : null}
    </span>
  )
}

function KeyFields({ record }: { record: Key }) {
  const refill = record.refill
    ? `${record.refill.amount} ${record.refill.interval}${record.refill.refillDay ? ` (day ${record.refill.refillDay})` : ''}`
    : undefined
  const limit = record.ratelimit
    ? `${record.ratelimit.limit} per ${formatDuration(record.ratelimit.duration)}${record.ratelimit.async ? ', asynchronous' : ''}`
    : undefined
  return (
    <Fields
      rows={[
        ['State', <KeyState keyRecord={record} />],
        ['Leaked', record.leaked ? <LeakNote leaked={record.leaked} /> : undefined],
        ['Key id', <span class="mono">{record.id}</span>],
        ['Start', <span class="mono">{record.start}…</span>],
        ['Name', record.name],
        ['Owner (externalId)', record.ownerId],
        ['Identity', record.identity ? <span class="mono">{record.identity.id}</span> : undefined],
        ['Created', formatTime(record.createdAt)],
        ['Updated', formatTime(record.updatedAt)],
        ['Expires', formatExpiry(record.expires)],
        ['Credits', formatCredits(record.remaining)],
        ['Refill', refill],
        ['Rate limit', limit],
        [
          'Named rate limits',
          record.ratelimits
            ?.map((named) => `${named.name}: ${named.limit} per ${formatDuration(named.duration)}`)
            .join('; '),
        ],
        ['Roles', record.roles?.join(', ')],
        ['Permissions', record.permissions?.join(', ')],
        ['Environment', record.environment],
        ['Meta', record.meta ? <pre>{formatJson(record.meta)}</pre> : undefined],
      ]}
    />
  )
}
