import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { applyAccent } from './branding.js'
import { forgetLinkCode, linkCode } from './link-code.js'
import { Notices, useNotices } from './notices.js'
import { PortalApi, PortalCallError } from './portal-api.js'
import { PortalHeader } from './portal-header.js'
import { PortalHome } from './portal-home.js'
import { SessionEnded } from './session-ended.js'
import type { Session } from './types.js'

type State =
  | { phase: 'starting' }
  | { phase: 'ready'; session: Session }
  | { phase: 'ended'; signedOut: boolean; session: Session | undefined }

/** A refusal of the link's code itself (used, unknown, expired, malformed): the session is not to be had. */
const refusesTheCode = (err: unknown) =>
  err instanceof PortalCallError && err.status >= 400 && err.status < 500 && err.status !== 429

/**
 * The portal page: signs in with the link's one-time code (the server sets the session's cookie), takes the code
 * out of the address bar, reads the session, then shows the customer's keys. Any 401 ends the session in place of
 * the page.
 */
export function App() {
  const [state, setState] = useState<State>({ phase: 'starting' })
  const session = useRef<Session>(undefined)
  const [notice, report] = useNotices()
  const api = useMemo(
    () => new PortalApi(() => setState({ phase: 'ended', signedOut: false, session: session.current })),
    [],
  )
  useEffect(() => {
    const start = async () => {
      const code = linkCode()
      if (code !== undefined) {
        try {
          await api.call('exchangeCode', { code })
        } catch (err) {
          // Refused, the code is of no more use. Unreached, or failed on the server (its store down), it was never
          // spent: it is kept, for a reload to sign in with.
          if (refusesTheCode(err)) {
            forgetLinkCode()
            setState({ phase: 'ended', signedOut: false, session: undefined })
          } else report.fail(err)
          return
        }
        forgetLinkCode()
      }
      try {
        const { data } = await api.call('getSession')
        session.current = data
        applyAccent(data.portal.accentColor)
        setState({ phase: 'ready', session: data })
      } catch (err) {
        report.fail(err)
      }
    }
    void start()
  }, [api, report])
  const signOut = async () => {
    try {
      await api.call('signOut')
      setState({ phase: 'ended', signedOut: true, session: session.current })
    } catch (err) {
      report.fail(err)
    }
  }
  if (state.phase === 'ended')
    return (
      <>
        <PortalHeader portal={state.session?.portal} back={state.session?.returnUrl} />
        <SessionEnded signedOut={state.signedOut} back={state.session?.returnUrl} />
      </>
    )
  if (state.phase === 'starting')
    return (
      <>
        <PortalHeader portal={undefined} back={undefined} />
        <main>
          <h1>API keys</h1>
          <p class="muted">Signing you in…</p>
          <Notices notice={notice} />
        </main>
      </>
    )
  return (
    <>
      <PortalHeader portal={state.session.portal} back={state.session.returnUrl} onSignOut={() => void signOut()} />
      <PortalHome api={api} session={state.session} notice={notice} report={report} />
    </>
  )
}
