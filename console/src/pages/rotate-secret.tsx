import { describeError, type KeygateApi } from '../api.js'
import { ReplaceSecretForm } from '../ui/replace-secret-form.js'

/** How long the replaced secret goes on signing beside the new one (webhooks.rotateSecret's graceSeconds, ≤ 7 days). */
const GRACE = [
  ['0', 'not at all: it stops now'],
  ['3600', '1 hour'],
  ['86400', '24 hours'],
  ['604800', '7 days'],
] as const

/**
 * Rotating an endpoint's signing secret: a new one signs from now on (shown once), the old one beside it for a
 * grace period, so that the receiver can move to the new one without refusing a delivery.
 */
export function RotateSecret(props: {
  api: KeygateApi
  endpointId: string
  onRotated: (secret: string, graceSeconds: number) => void
}) {
  const rotate = async (grace: string) => {
    const { secret } = await props.api.post('webhooks.rotateSecret', {
      endpointId: props.endpointId,
      graceSeconds: Number(grace),
    })
    props.onRotated(secret, Number(grace))
  }
  return (
    <section aria-labelledby="rotate-title">
      <h2 id="rotate-title">Rotate the signing secret</h2>
      <p>A new secret signs every delivery from now on; it is shown once.</p>
      <ReplaceSecretForm
        labelledBy="rotate-title"
        graceLabel="The old secret keeps signing"
        graces={GRACE}
        initialGrace="86400"
        submitLabel="Rotate now"
        replace={rotate}
        describeError={describeError}
      />
    </section>
  )
}
