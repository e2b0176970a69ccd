import { useState } from 'preact/hooks'

export interface Submitting {
  busy: boolean
  error: unknown
  submit: (event: Event) => void
}

/**
 * A form's submit: runs `write` unless `ready` is false (a field's problem is shown) or a write is under way, and
 * keeps its error to show under the form. `write` resets the fields and says what it did.
 */
export function useSubmit(write: () => Promise<void>, ready = true): Submitting {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const submit = async (event: Event) => {
    event.preventDefault()
    if (!ready || busy) return
    setBusy(true)
    setError(undefined)
    try {
      await write()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, submit: (event) => void submit(event) }
}
