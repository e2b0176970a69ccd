import type { Logger } from 'pino'
import type { SecretBox } from '../shared/secrets/secret-box.js'
import type { Clock } from '../shared/clock.js'
import type { ManagementStore } from '../shared/store/management-store.js'
import type { AuditLog } from './audit/audit-log.js'
import type { RootKeys } from './root-keys/root-keys.js'
import type { Principal } from '../shared/root-keys/root-key-principal.js'
import type { Rbac } from './permissions/rbac.js'
import type { RatelimitNamespaces } from './ratelimits/ratelimit-namespaces.js'
import type { RatelimitOverrides } from './ratelimits/ratelimit-overrides.js'
import type { Identities } from './identities/identities.js'
import type { KeyWrites } from './keys/key-writes.js'
import type { ApiSettingsRecords } from './apis/api-settings.js'
import type { NamespaceLimits } from '../shared/ratelimits/namespace-limits.js'
import type { HostLookup } from './webhooks/delivery/address-policy.js'
import type { EndpointSender } from './webhooks/delivery/endpoint-sender.js'
import type { TestsInFlight } from './webhooks/tests-in-flight.js'
import type { WebhookPolicy } from './webhooks/webhook-policy.js'
import type { LeakMetrics } from './leaks/leak-metrics.js'
import type { PortalRecords } from './portal/portal-records.js'
import type { AnalyticsAccess } from './analytics/analytics-access.js'

/** What every management operation is given (app.ts makes it): nothing is imported as a singleton. */
export interface ControlPlaneDeps {
  store: ManagementStore
  audit: AuditLog
  rootKeys: RootKeys
  /**
   * The root key of an `Authorization` header, or the contract's UNAUTHORIZED: every management route's caller, checked
   * before the body is read (control-plane/http/management-route.ts).
   */
  authenticateRootKey(authorization: string | string[] | undefined): Principal | Promise<Principal>
  rbac: Rbac
  namespaces: RatelimitNamespaces
  overrides: RatelimitOverrides
  identities: Identities
  /** Key writes that take more than one store call. */
  writes: KeyWrites
  /** Apis' settings (IP allow-list, leak policy): entities of their own. */
  apiSettings: ApiSettingsRecords
  /** ratelimits.limit's core: the process's verifier's. */
  ratelimits: NamespaceLimits
  /** What operators allow of webhook endpoints. */
  webhookPolicy: WebhookPolicy
  /** How webhook endpoints' hosts are resolved (DNS; tests resolve names of their own). */
  hostLookup: HostLookup
  /** What sends requests to webhook endpoints: the delivery worker's, which webhooks.sendTest sends through too. */
  webhookSender: Pick<EndpointSender, 'send'>
  /** What seals the secrets kept in the store (meter exports' credentials); undefined: ENCRYPTION_KEYS is not set. */
  secrets: SecretBox | undefined
  /** The endpoints webhooks.sendTest is sending to now: one test at a time each. */
  webhookTests: TestsInFlight
  /** What leak reports did (GitHub's and keys.reportLeak). */
  leakMetrics: LeakMetrics
  /** Customer portals (their sessions are in store.portalSessions). */
  portals: PortalRecords
  /** Where the portal page is served: portal.createSession's URL is this with `?code=`. */
  portalUrl: string
  /** The analytics engine analytics queries run on, when this control plane serves them. */
  analytics: AnalyticsAccess
  clock: Clock
  log: Logger
}
