import { useState } from 'preact/hooks'
import { keyLabel } from './key-label.js'
import { Modal } from './modal.js'
import { ErrorNote } from './notices.js'
import type { PortalApi } from './portal-api.js'
import type { PortalKey } from './types.js'

/** Asking before revoking a key (portal.revokeKey): it cannot be undone. */
export function RevokeKeyDialog(props: {
  api: PortalApi
  keyRecord: PortalKey
  onRevoked: (key: PortalKey) => void
  onClose: () => void
}) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const submit = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    setBusy(true)
    setError(undefined)
    try {
      await props.api.call('revokeKey', { keyId: props.keyRecord.keyId })
      props.onRevoked(props.keyRecord)
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  return (
    <Modal title={`Revoke ${keyLabel(props.keyRecord)}?`} onClose={props.onClose}>
      <form method="dialog" class="dialog-form" onSubmit={(event) => void submit(event)}>
        <p>Anything that uses this key stops working within moments. This cannot be undone.</p>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="submit" class="danger" disabled={busy}>
            Revoke key
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  )
}
