import { useState } from 'preact/hooks'
import { Select } from '../../console/src/ui/fields.js'
import { keyLabel } from './key-label.js'
import { Modal } from './modal.js'
import { ErrorNote } from './notices.js'
import type { PortalApi } from './portal-api.js'
import type { NewKey, PortalKey } from './types.js'

/** How long the old key keeps working after a roll (portal.rerollKey's `expiration`, at most 7 days). */
const OVERLAP = [
  ['0', 'No overlap: it stops working now'],
  ['3600000', '1 hour'],
  ['86400000', '24 hours'],
  ['604800000', '7 days'],
] as const
type Overlap = (typeof OVERLAP)[number][0]

/** Rolling a key: a new key replaces it (shown once), the old one working on for the overlap chosen. */
export function RollKeyDialog(props: {
  api: PortalApi
  keyRecord: PortalKey
  onRolled: (made: NewKey, overlapMs: number) => void
  onClose: () => void
}) {
  const [overlap, setOverlap] = useState<Overlap>('86400000')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const submit = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    setBusy(true)
    setError(undefined)
    try {
      const { data } = await props.api.call<NewKey>('rerollKey', {
        keyId: props.keyRecord.keyId,
        expiration: Number(overlap),
      })
      props.onRolled(data, Number(overlap))
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  return (
    <Modal title={`Roll ${keyLabel(props.keyRecord)}`} onClose={props.onClose}>
      <form method="dialog" class="dialog-form" onSubmit={(event) => void submit(event)}>
        <p>
          A new key replaces this one, with the same settings. It is shown once. Give the old key time to be replaced
          wherever it is used.
        </p>
        <Select label="The old key keeps working for" value={overlap} options={OVERLAP} onChange={setOverlap} />
        <ErrorNote error={error} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Roll key
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  )
}
