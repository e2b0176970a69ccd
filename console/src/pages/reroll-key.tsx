import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { ErrorNote } from '../ui/page.js'
import { Select } from '../ui/fields.js'

/** How long the old key keeps working after a reroll (keys.rerollKey's `expiration`, at most 30 days). */
const GRACE = [
  ['0', 'not at all: it stops now'],
  ['60000', '1 minute'],
  ['3600000', '1 hour'],
  ['86400000', '24 hours'],
  ['604800000', '7 days'],
  ['2592000000', '30 days'],
] as const

/** Rerolling a key: a new key with the same fields (shown once), the old one kept for a grace period. */
export function RerollKey(props: {
  api: KeygateApi
  keyId: string
  onRerolled: (made: { keyId: string; key: string }, graceMs: number) => void
}) {
  const [grace, setGrace] = useState<(typeof GRACE)[number][0]>('3600000')
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    setBusy(true)
    setError(undefined)
    try {
      const made = await props.api.post<{ keyId: string; key: string }>('keys.rerollKey', {
        keyId: props.keyId,
        expiration: Number(grace),
      })
      props.onRerolled(made, Number(grace))
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  return (
    <section aria-labelledby="reroll-title">
      <h2 id="reroll-title">Reroll the key</h2>
      <p>A new key replaces this one, with the same fields; it is shown once.</p>
      <form aria-labelledby="reroll-title" onSubmit={(event) => void submit(event)}>
        <Select label="The old key keeps working" value={grace} options={GRACE} onChange={setGrace} />
        <button type="submit" disabled={busy}>
          Reroll now
        </button>
        <ErrorNote error={error} />
      </form>
    </section>
  )
}
