import { hrefOf, type Route } from './router.js'

const SECTIONS: [Route['page'][], string, Route][] = [
  [['overview'], 'Overview', { page: 'overview' }],
  [['apis', 'keys', 'key'], 'Apis', { page: 'apis' }],
  [['identities', 'identity'], 'Identities', { page: 'identities' }],
  [['permissions'], 'Permissions', { page: 'permissions' }],
  [['roles'], 'Roles', { page: 'roles' }],
  [['ratelimits', 'namespace'], 'Rate limits', { page: 'ratelimits' }],
  [['root-keys'], 'Root keys', { page: 'root-keys' }],
  [['webhooks', 'webhook'], 'Webhooks', { page: 'webhooks' }],
  [['audit'], 'Audit log', { page: 'audit' }],
]

/** The console's header: its sections (the current one marked for screen readers too) and signing out. */
export function Nav({ route, onSignOut }: { route: Route; onSignOut: () => void }) {
  return (
    <header class="top">
      <span class="brand">Keygate console</span>
      <nav aria-label="Sections">
        <ul>
          {SECTIONS.map(([pages, text, target]) => (
            <li key={text}>
              <a href={hrefOf(target)} aria-current={pages.includes(route.page) ? 'page' : undefined}>
                {text}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <button type="button" class="secondary" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  )
}
