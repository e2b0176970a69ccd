import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { formatDuration } from '../format.js'
import { hrefOf, navigate } from '../router.js'
import { ConfirmDialog } from '../ui/confirm.js'
import { ErrorNote, Page, StatusNote } from '../ui/page.js'
import { ShownOnce } from '../ui/shown-once.js'
import { useLoad } from '../ui/use-load.js'
import { DeliveryLog } from './delivery-log.js'
import { EditEndpoint } from './edit-endpoint.js'
import { RotateSecret } from './rotate-secret.js'
import { SendTest } from './send-test.js'
import { DELETE_WARNING, EndpointFields, SECRET_WARNING } from './webhook-fields.js'

/**
 * A webhook endpoint: its fields, the actions on it (enable or disable, edit, send a test event, rotate its secret,
 * delete), and its delivery log, from which events are sent again.
 */
export function WebhookPage({ api, endpointId }: { api: KeygateApi; endpointId: string }) {
  const endpoint = useLoad(() => api.get('webhooks.getEndpoint', { endpointId }), [api, endpointId])
  const [status, setStatus] = useState<string>()
  const [error, setError] = useState<unknown>()
  const [rotated, setRotated] = useState<string>()
  const [deleting, setDeleting] = useState(false)
  const [panel, setPanel] = useState<'edit' | 'test' | 'rotate'>()
  // Bumped by a test sent, so that the delivery log shows its attempt.
  const [sent, setSent] = useState(0)
  const record = endpoint.data
  const title = record ? `Endpoint ${record.url}` : 'Endpoint'
  // Opening or closing a panel clears what the last action said: a "Saved." beside a form not saved yet would mislead.
  const toggle = (which: 'edit' | 'test' | 'rotate') => {
    setStatus(undefined)
    setPanel(panel === which ? undefined : which)
  }

  const setEnabled = async (enabled: boolean) => {
    setError(undefined)
    try {
      await api.post('webhooks.updateEndpoint', { endpointId, enabled })
      setStatus(enabled ? 'Enabled: events are sent to it again.' : 'Disabled: no event is sent to it.')
      endpoint.reload()
    } catch (err) {
      setError(err)
    }
  }

  return (
    <Page title={title}>
      <ErrorNote error={endpoint.error} />
      {record ? (
        <>
          <p class="muted">
            <a href={hrefOf({ page: 'webhooks' })}>Webhooks</a> / <span class="mono">{endpointId}</span>
          </p>
          <div class="actions" role="group" aria-label="Endpoint actions">
            {record.enabled ? (
              <button type="button" class="secondary" onClick={() => void setEnabled(false)}>
                Disable endpoint
              </button>
            ) : (
              <button type="button" onClick={() => void setEnabled(true)}>
                Enable endpoint
              </button>
            )}
            <button type="button" class="secondary" aria-expanded={panel === 'edit'} onClick={() => toggle('edit')}>
              Edit endpoint
            </button>
            <button type="button" class="secondary" aria-expanded={panel === 'test'} onClick={() => toggle('test')}>
              Send test event
            </button>
            <button type="button" class="secondary" aria-expanded={panel === 'rotate'} onClick={() => toggle('rotate')}>
              Rotate secret
            </button>
            <button type="button" class="danger" onClick={() => setDeleting(true)}>
              Delete endpoint
            </button>
          </div>
          <StatusNote text={status} />
          <ErrorNote error={error} />
          {rotated ? (
            <ShownOnce
              label="New signing secret"
              secret={rotated}
              warning={SECRET_WARNING}
              onDone={() => setRotated(undefined)}
            />
          ) : null}
          {panel === 'rotate' ? (
            <RotateSecret
              api={api}
              endpointId={endpointId}
              onRotated={(secret, graceSeconds) => {
                setPanel(undefined)
                setRotated(secret)
                setStatus(
                  graceSeconds > 0
                    ? `Rotated: the old secret signs too for ${formatDuration(graceSeconds * 1000)}, then only the new one does.`
                    : 'Rotated: only the new secret signs from now on.',
                )
              }}
            />
          ) : null}
          {panel === 'test' ? <SendTest api={api} endpoint={record} onSent={() => setSent((n) => n + 1)} /> : null}
          {panel === 'edit' ? (
            <EditEndpoint
              api={api}
              endpoint={record}
              onSaved={(changed) => {
                setPanel(undefined)
                setStatus(changed ? 'Saved.' : 'Nothing to save: no field was changed.')
                endpoint.reload()
              }}
            />
          ) : null}
          <EndpointFields endpoint={record} />
          <DeliveryLog api={api} endpointId={endpointId} onReplayed={setStatus} freshness={sent} />
        </>
      ) : null}
      {deleting && record ? (
        <ConfirmDialog
          title={`Delete the endpoint ${record.url}?`}
          confirmLabel="Delete endpoint"
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await api.post('webhooks.deleteEndpoint', { endpointId })
            navigate({ page: 'webhooks' })
          }}
        >
          <p>{DELETE_WARNING}</p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}
