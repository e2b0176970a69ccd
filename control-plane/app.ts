import type { Clock } from '../shared/clock.js'
import { buildServer, type KeygateServer, type ServerBase } from '../shared/http/build-server.js'
import { storeReadiness } from '../shared/http/store-readiness.js'
import type { ManagementStore } from '../shared/store/management-store.js'
import { AuditLog } from './audit-log.js'
import { limitManagementCalls } from './management-rate-limit.js'
import { KeyWrites, type WriteListener } from './key-writes.js'
import type { RootKeyAuthenticator } from '../shared/root-key-authenticator.js'
import { decoratePrincipal } from '../shared/http/request-principal.js'
import { RootKeys } from './root-keys.js'
import { backfillRootKeysOnStart } from './root-key-backfill.js'
import { Rbac } from './rbac.js'
import { RatelimitNamespaces } from './ratelimit-namespaces.js'
import { RatelimitOverrides } from './ratelimit-overrides.js'
import type { NamespaceLimits } from '../shared/namespace-limits.js'
import { registerLimit } from './routes/ratelimits-limit.js'
import { registerOverrideRoutes } from './routes/ratelimits-overrides.js'
import { registerListNamespaces } from './routes/ratelimits-list-namespaces.js'
import { Identities } from './identities.js'
import { registerCreateApi } from './routes/apis-create-api.js'
import { registerDeleteApi } from './routes/apis-delete-api.js'
import { registerGetApi } from './routes/apis-get-api.js'
import { registerListKeys } from './routes/apis-list-keys.js'
import { registerListApis } from './routes/apis-list-apis.js'
import { registerPermissionAndRoleRoutes } from './routes/keys-permissions-and-roles.js'
import { registerDeleteKeys } from './routes/apis-delete-keys.js'
import { registerAuditList } from './routes/audit-list.js'
import { registerCreateRootKey } from './routes/root-keys-create-root-key.js'
import { registerListRootKeys } from './routes/root-keys-list-root-keys.js'
import { registerRevokeRootKey } from './routes/root-keys-revoke-root-key.js'
import { registerRollRootKey } from './routes/root-keys-roll-root-key.js'
import { registerLiveness } from './routes/liveness.js'
import { registerPermissionRoutes } from './routes/permissions-permissions.js'
import { registerRoleRoutes } from './routes/permissions-roles.js'
import { registerAnalyticsGetVerifications } from './routes/analytics-get-verifications.js'
import { registerMigrationsCreateKeys } from './routes/migrations-create-keys.js'
import { registerCreateIdentity } from './routes/identities-create-identity.js'
import { registerGetIdentity } from './routes/identities-get-identity.js'
import { registerListIdentities } from './routes/identities-list-identities.js'
import { registerUpdateIdentity } from './routes/identities-update-identity.js'
import { registerDeleteIdentity } from './routes/identities-delete-identity.js'
import { registerOpenApi } from './openapi/openapi-plugin.js'
import { registerConsole, type ConsoleFiles } from './console-route.js'
import { registerV2ApiRoutes } from './v2/apis-routes.js'
import { registerV2IdentityRoutes } from './v2/identities-routes.js'
import { registerV2PermissionRoutes } from './v2/permissions-routes.js'
import { registerV2KeyGrantRoutes } from './v2/key-grants-routes.js'
import { registerV2MigrateKeys } from './v2/migrate-keys-route.js'
import { registerV2RatelimitRoutes } from './v2/ratelimit-routes.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import { registerManagementRoutes } from './management-route.js'
import { MANAGEMENT_ROUTES } from './operations/management-routes.js'

export interface ControlPlaneAppDeps extends ServerBase {
  store: ManagementStore
  clock: Clock
  /** Whether KEYGATE_ROOT_KEY is set: then stored root keys verifiers cannot check yet are published at start. */
  hasBootstrapRootKey: boolean
  /** Who calls: the management hook's root-key check (store-backed: control-plane/stored-root-keys.ts). */
  rootKeys: RootKeyAuthenticator
  /** Management calls per root key per minute (0 or absent: no limit). */
  managementRateLimit?: number | undefined
  /** Told of every write as soon as the store has it: the process's verifier, for read-your-writes. */
  onWrite: WriteListener
  /** Why something else in the process (its verifier's sync) keeps it from serving correctly, or []. */
  notReadyReasons?: () => string[]
  /** ratelimits.limit's core: the process's verifier's (cli/assemble-verifier.ts namespaceRatelimitsOf). */
  ratelimits: NamespaceLimits
  /**
   * Routes outside the management API's root-key hook, beside liveness: v1's keys.verifyKey (no root key), v2's (which
   * checks its root key with the same authenticator), forward-auth in dev.
   */
  publicRoutes?: (app: KeygateServer) => void
  /** The admin console's built files, served at /console (null: not built, /console says so). */
  console?: ConsoleFiles | null
}

/**
 * The control plane's HTTP surface. Never listens: cli/control-plane-command.ts does, tests inject. What it
 * needs of a verifier is handed in by the composition root (cli/assemble-control-plane.ts).
 */
export function buildControlPlaneApp(deps: ControlPlaneAppDeps): KeygateServer {
  const storeReady = storeReadiness(deps.store)
  const app = buildServer({
    ...deps,
    logRequests: true,
    notReadyReasons: async () => [...(await storeReady()), ...(deps.notReadyReasons?.() ?? [])],
    // Before every route, the server's own (probes, metrics) included, so that the document lists them all.
    documentation: registerOpenApi,
  })
  const audit = new AuditLog(deps.store.audit, deps.clock, deps.log)
  const rootKeys = new RootKeys({ store: deps.store, audit, clock: deps.clock, onWrite: deps.onWrite })
  const rbac = new Rbac(deps.store.entities, deps.clock, deps.onWrite, audit)
  const identities = new Identities(deps.store.entities, deps.clock, deps.onWrite)
  const namespaces = new RatelimitNamespaces(deps.store.entities, deps.clock, deps.onWrite)
  const overrides = new RatelimitOverrides(deps.store.entities, namespaces, deps.clock, deps.onWrite)
  const writes = new KeyWrites(deps, deps.onWrite)
  const routeDeps: ControlPlaneDeps = {
    store: deps.store,
    audit,
    rootKeys,
    rbac,
    namespaces,
    overrides,
    identities,
    writes,
    ratelimits: deps.ratelimits,
    clock: deps.clock,
    log: deps.log,
  }
  decoratePrincipal(app)
  // Management routes: the root key is checked before the body is even parsed (UNAUTHORIZED before 400).
  app.register(async (management: KeygateServer) => {
    management.addHook('onRequest', async (request) => {
      request.principal = await deps.rootKeys.principalOf(request.headers.authorization)
    })
    // Stored root keys that verifiers cannot check yet (legacy ones, never published): published at start (in this
    // plugin, so that its onClose runs before the store is closed).
    backfillRootKeysOnStart(management, rootKeys, deps.hasBootstrapRootKey, deps.log)
    await limitManagementCalls(management, deps.managementRateLimit ?? 0)
    registerManagementRoutes(management, routeDeps, MANAGEMENT_ROUTES)
    registerCreateApi(management, routeDeps)
    registerGetApi(management, routeDeps)
    registerDeleteApi(management, routeDeps, writes)
    registerListApis(management, routeDeps)
    registerListKeys(management, routeDeps)
    registerPermissionAndRoleRoutes(management, routeDeps, writes)
    registerDeleteKeys(management, routeDeps, writes)
    registerMigrationsCreateKeys(management, routeDeps, writes)
    registerAnalyticsGetVerifications(management, routeDeps)
    registerAuditList(management, routeDeps)
    registerCreateRootKey(management, routeDeps)
    registerListRootKeys(management, routeDeps)
    registerRevokeRootKey(management, routeDeps)
    registerRollRootKey(management, routeDeps)
    registerPermissionRoutes(management, routeDeps)
    registerRoleRoutes(management, routeDeps)
    registerLimit(management, routeDeps, deps.ratelimits)
    registerOverrideRoutes(management, routeDeps)
    registerListNamespaces(management, routeDeps)
    registerCreateIdentity(management, routeDeps)
    registerGetIdentity(management, routeDeps)
    registerListIdentities(management, routeDeps)
    registerUpdateIdentity(management, routeDeps)
    registerDeleteIdentity(management, routeDeps)
    // Unkey's v2 wire format over the same operations (control-plane/v2/).
    registerV2IdentityRoutes(management, routeDeps)
    registerV2PermissionRoutes(management, routeDeps)
    registerV2KeyGrantRoutes(management, routeDeps, writes)
    registerV2MigrateKeys(management, routeDeps, writes)
    registerV2ApiRoutes(management, routeDeps, writes)
    registerV2RatelimitRoutes(management, routeDeps, deps.ratelimits)
  })
  // In a plugin of their own so that they load after the OpenAPI plugin, which documents routes as they are added.
  app.register(async (open: KeygateServer) => {
    registerLiveness(open, routeDeps)
    registerConsole(open, deps.console ?? null)
    deps.publicRoutes?.(open)
  })
  return app
}
