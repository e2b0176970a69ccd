import { useMemo, useState } from 'preact/hooks'
import { KeygateApi } from './api.js'
import { Nav } from './nav.js'
import { PageOf } from './pages/page-of.js'
import { SignIn } from './pages/sign-in.js'
import { useRoute } from './router.js'
import { forgetRootKey, saveRootKey, savedRootKey } from './session.js'

export function App() {
  const [rootKey, setRootKey] = useState(savedRootKey)
  const route = useRoute()
  const api = useMemo(() => (rootKey ? new KeygateApi(rootKey) : undefined), [rootKey])
  if (!api) {
    return (
      <SignIn
        onSignedIn={(key) => {
          saveRootKey(key)
          setRootKey(key)
        }}
      />
    )
  }
  const signOut = () => {
    forgetRootKey()
    setRootKey(null)
  }
  return (
    <>
      <Nav route={route} onSignOut={signOut} />
      <main>
        <PageOf route={route} api={api} />
      </main>
    </>
  )
}
