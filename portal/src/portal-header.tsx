import { logoUrl, returnUrl } from './branding.js'
import type { Session } from './types.js'

/**
 * The portal's banner: the operator's logo and name (as text: a name is never read as markup), the way back to the
 * operator's site, and Sign out. Before a session is known (or once it has ended) it shows what it knows.
 */
export function PortalHeader(props: {
  portal: Session['portal'] | undefined
  back: string | undefined
  onSignOut?: (() => void) | undefined
}) {
  const logo = logoUrl(props.portal?.logoUrl)
  const back = returnUrl(props.back)
  return (
    <header class="top">
      <div class="brand">
        {/* The name beside it says whose logo it is: the image adds nothing for a screen reader. */}
        {logo ? <img class="logo" src={logo} alt="" referrerpolicy="no-referrer" /> : null}
        <span class="brand-name">{props.portal?.name ?? 'API keys'}</span>
      </div>
      {back || props.onSignOut ? (
        <div class="session-actions">
          {back ? <a href={back}>Back</a> : null}
          {props.onSignOut ? (
            <button type="button" class="secondary" onClick={props.onSignOut}>
              Sign out
            </button>
          ) : null}
        </div>
      ) : null}
    </header>
  )
}
