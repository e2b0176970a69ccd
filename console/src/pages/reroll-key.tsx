import { describeError, type KeygateApi } from '../api.js'
import type { NewKey } from '../types.js'
import { ReplaceSecretForm } from '../ui/replace-secret-form.js'

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
  onRerolled: (made: NewKey, graceMs: number) => void
}) {
  const reroll = async (grace: string) => {
    const made = await props.api.post('keys.rerollKey', {
      keyId: props.keyId,
      expiration: Number(grace),
    })
    props.onRerolled(made, Number(grace))
  }
  return (
    <section aria-labelledby="reroll-title">
      <h2 id="reroll-title">Reroll the key</h2>
      <p>A new key replaces this one, with the same fields; it is shown once.</p>
      <ReplaceSecretForm
        labelledBy="reroll-title"
        graceLabel="The old key keeps working"
        graces={GRACE}
        initialGrace="3600000"
        submitLabel="Reroll now"
        replace={reroll}
        describeError={describeError}
      />
    </section>
  )
}
