import type { KeygateApi } from '../api.js'
import type { Route } from '../router.js'
import { ApisPage } from './apis.js'
import { AuditPage } from './audit.js'
import { IdentitiesPage } from './identities.js'
import { IdentityPage } from './identity.js'
import { KeyPageView } from './key.js'
import { KeysPage } from './keys.js'
import { NamespacePage } from './namespace.js'
import { NotFoundPage } from './not-found.js'
import { OverviewPage } from './overview.js'
import { PermissionsPage } from './permissions.js'
import { RatelimitsPage } from './ratelimits.js'
import { RolesPage } from './roles.js'
import { RootKeysPage } from './root-keys.js'
import { WebhookPage } from './webhook.js'
import { WebhooksPage } from './webhooks.js'

/** The page a route shows; keyed by the record it shows, so that moving to another starts it afresh. */
export function PageOf({ route, api }: { route: Route; api: KeygateApi }) {
  switch (route.page) {
    case 'overview':
      return <OverviewPage api={api} />
    case 'apis':
      return <ApisPage api={api} />
    case 'keys':
      return <KeysPage key={route.apiId} api={api} apiId={route.apiId} />
    case 'key':
      return <KeyPageView key={route.keyId} api={api} keyId={route.keyId} />
    case 'identities':
      return <IdentitiesPage api={api} />
    case 'identity':
      return <IdentityPage key={route.identityId} api={api} identityId={route.identityId} />
    case 'permissions':
      return <PermissionsPage api={api} />
    case 'roles':
      return <RolesPage api={api} />
    case 'ratelimits':
      return <RatelimitsPage api={api} />
    case 'namespace':
      return <NamespacePage key={route.name} api={api} name={route.name} />
    case 'root-keys':
      return <RootKeysPage api={api} />
    case 'webhooks':
      return <WebhooksPage api={api} />
    case 'webhook':
      return <WebhookPage key={route.endpointId} api={api} endpointId={route.endpointId} />
    case 'audit':
      return <AuditPage key={route.keyId ?? ''} api={api} keyId={route.keyId} />
    case 'not-found':
      return <NotFoundPage hash={route.hash} />
  }
}
