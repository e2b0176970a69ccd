import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { Select } from '../ui/fields.js'
import { ErrorNote } from '../ui/page.js'

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
  const [grace, setGrace] = useState<(typeof GRACE)[number][0]>('86400')
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    setBusy(true)
    setError(undefined)
    try {
      const { secret } = await props.api.post<{ secret: string }>('webhooks.rotateSecret', {
        endpointId: props.endpointId,
        graceSeconds: Number(grace),
      })
      props.onRotated(secret, Number(grace))
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  return (
    <section aria-labelledby="rotate-title">
      <h2 id="rotate-title">Rotate the signing secret</h2>
      <p>A new secret signs every delivery from now on; it is shown once.</p>
      <form aria-labelledby="rotate-title" onSubmit={(event) => void submit(event)}>
        <Select label="The old secret keeps signing" value={grace} options={GRACE} onChange={setGrace} />
        <button type="submit" disabled={busy}>
          Rotate now
        </button>
        <ErrorNote error={error} />
      </form>
    </section>
  )
}
