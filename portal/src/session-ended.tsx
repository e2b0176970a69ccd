import { useEffect, useRef } from 'preact/hooks'
import { returnUrl } from './branding.js'

/**
 * In place of the page once the session is over: signed out, or refused (expired, revoked, or a link already used).
 * Its heading takes focus, so that a screen reader says at once why everything else went away.
 */
export function SessionEnded(props: { signedOut: boolean; back: string | undefined }) {
  const heading = useRef<HTMLHeadingElement>(null)
  const back = returnUrl(props.back)
  useEffect(() => {
    document.title = props.signedOut ? 'Signed out' : 'Your session has ended'
    heading.current?.focus()
  }, [props.signedOut])
  return (
    <main>
      <h1 tabIndex={-1} ref={heading}>
        {props.signedOut ? 'You have signed out' : 'Your session has ended'}
      </h1>
      <p>
        {props.signedOut
          ? 'Your keys keep working. To manage them again, open this page again from the site that sent you here.'
          : 'The link you followed has expired or was already used, or you signed out. Your keys keep working. ' +
            'To manage them, open this page again from the site that sent you here.'}
      </p>
      {back ? (
        <p>
          <a href={back}>Back to where you came from</a>
        </p>
      ) : null}
    </main>
  )
}
