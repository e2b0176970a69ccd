import { useState } from 'preact/hooks'
import { ApiCallError, KeygateApi } from '../api.js'
import { Field } from '../ui/fields.js'
import { ErrorNote, Page } from '../ui/page.js'

/**
 * Sign-in with a root key. One call checks it (Keygate authenticates before anything else): a root key Keygate
 * refuses stays out; one that may not list apis is still let in, since it may do other things.
 */
export function SignIn({ onSignedIn }: { onSignedIn: (rootKey: string) => void }) {
  const [rootKey, setRootKey] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const submit = async (event: Event) => {
    // Never the browser's own submission: it would put the key in a URL.
    event.preventDefault()
    const key = rootKey.trim()
    if (!key || busy) return
    setBusy(true)
    setError(undefined)
    try {
      await new KeygateApi(key).get('apis.listApis', { limit: 1 })
      onSignedIn(key)
    } catch (err) {
      if (err instanceof ApiCallError && err.code === 'INSUFFICIENT_PERMISSIONS') onSignedIn(key)
      else {
        setError(err)
        setBusy(false)
      }
    }
  }
  return (
    <main class="sign-in">
      <Page title="Sign in" focusHeading={false}>
        <p>
          Sign in with a root key (<code>keygate dev</code> prints one). It is kept for this tab only and sent to this
          Keygate only: the console can do what the root key may do, nothing more.
        </p>
        <form method="post" onSubmit={(event) => void submit(event)}>
          <Field label="Root key" type="password" value={rootKey} onChange={setRootKey} required autoFocus />
          <ErrorNote error={error} />
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </form>
      </Page>
    </main>
  )
}
