import { ReplaceSecretForm } from '../../console/src/ui/replace-secret-form.js'
import { keyLabel } from './key-label.js'
import { Modal } from './modal.js'
import { describeError, type PortalApi } from './portal-api.js'
import type { NewKey, PortalKey } from './types.js'

/** How long the old key keeps working after a roll (portal.rerollKey's `expiration`, at most 7 days). */
const OVERLAP = [
  ['0', 'No overlap: it stops working now'],
  ['3600000', '1 hour'],
  ['86400000', '24 hours'],
  ['604800000', '7 days'],
] as const

/** Rolling a key: a new key replaces it (shown once), the old one working on for the overlap chosen. */
export function RollKeyDialog(props: {
  api: PortalApi
  keyRecord: PortalKey
  onRolled: (made: NewKey, overlapMs: number) => void
  onClose: () => void
}) {
  const roll = async (overlap: string) => {
    const { data } = await props.api.call('rerollKey', {
      keyId: props.keyRecord.keyId,
      expiration: Number(overlap),
    })
    props.onRolled(data, Number(overlap))
  }
  return (
    <Modal title={`Roll ${keyLabel(props.keyRecord)}`} onClose={props.onClose}>
      <ReplaceSecretForm
        intro={
          <p>
            A new key replaces this one, with the same settings. It is shown once. Give the old key time to be replaced
            wherever it is used.
          </p>
        }
        graceLabel="The old key keeps working for"
        graces={OVERLAP}
        initialGrace="86400000"
        submitLabel="Roll key"
        replace={roll}
        describeError={describeError}
        onCancel={props.onClose}
      />
    </Modal>
  )
}
