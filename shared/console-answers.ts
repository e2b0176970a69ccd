import type { AuditEntry, LeakMark, NamedRateLimit, RateLimitConfig, Refill, UsageThreshold } from './ui-shapes.js'

/**
 * What v1 answers each call the admin console makes, declared once for the console to read (`npm run build` copies
 * this file and ui-shapes.ts into console/src/generated/). test/unit/ui-answers.test.ts holds every one to its
 * route's response schema, so a field the wire gains and this file lacks fails the type-check.
 */
export interface ConsoleAnswers {
  'apis.createApi': { apiId: string; name: string }
  'apis.deleteApi': Done
  'apis.getApi': { id: string; workspaceId: string; name: string }
  'apis.listApis': { apis: ListedApi[]; cursor?: string }
  'apis.listKeys': KeyPage
  'audit.list': { entries: AuditEntry[]; cursor?: string }
  'identities.createIdentity': { identityId: string }
  'identities.deleteIdentity': Done
  'identities.getIdentity': Identity
  'identities.listIdentities': { identities: ListedIdentity[]; total: number; cursor?: string }
  'identities.updateIdentity': Identity
  'keys.createKey': NewKey
  'keys.deleteKey': Done
  'keys.getKey': Key
  'keys.getVerifications': Verifications
  'keys.rerollKey': NewKey
  'keys.updateKey': Done
  'permissions.createPermission': { permissionId: string }
  'permissions.createRole': { roleId: string }
  'permissions.deletePermission': Done
  'permissions.deleteRole': Done
  'permissions.listPermissions': Permission[]
  'permissions.listRoles': Role[]
  'permissions.setRolePermissions': PermissionRef[]
  'ratelimits.deleteOverride': Done
  'ratelimits.listNamespaces': { namespaces: Namespace[]; cursor?: string }
  'ratelimits.listOverrides': { overrides: Override[]; total: number; cursor?: string }
  'ratelimits.setOverride': { overrideId: string }
  'rootKeys.createRootKey': { rootKeyId: string; key: string }
  'rootKeys.listRootKeys': { rootKeys: RootKey[]; cursor?: string }
  'rootKeys.revokeRootKey': Done
  'webhooks.createEndpoint': { endpointId: string; secret: string }
  'webhooks.deleteEndpoint': Done
  'webhooks.getEndpoint': WebhookEndpoint
  'webhooks.listAttempts': { attempts: DeliveryAttempt[]; dead: DeadDelivery[] }
  'webhooks.listEndpoints': { endpoints: WebhookEndpoint[] }
  'webhooks.replay': { queued: number; cursor?: string }
  'webhooks.rotateSecret': { secret: string }
  'webhooks.sendTest': TestDelivery
  'webhooks.updateEndpoint': Done
}

export type ConsoleOperation = keyof ConsoleAnswers

/** A write that answers nothing more than its 200: an empty object. */
export type Done = object

/** A key as getKey and listKeys show it: never its hash. */
export interface Key {
  id: string
  start: string
  apiId: string
  /** Always `ws_keygate`. */
  workspaceId: string
  name?: string
  ownerId?: string
  meta?: Record<string, unknown>
  expires?: number
  remaining?: number
  refill?: Refill
  creditsLowThreshold?: number
  ratelimit?: Required<RateLimitConfig>
  ratelimits?: NamedRateLimit[]
  createdAt: number
  updatedAt?: number
  enabled: boolean
  environment?: string
  /** Its own and those its roles grant. */
  permissions?: string[]
  roles?: string[]
  identity?: { id: string; externalId: string; meta?: Record<string, unknown> }
  /** Set when the key was reported leaked (docs/leaked-keys.md). */
  leaked?: LeakMark
  ipWhitelist?: string[]
  usageThresholds?: UsageThreshold[]
}

export interface KeyPage {
  keys: Key[]
  /** Every key of the api, on all pages. */
  total: number
  cursor?: string
}

/** A key as issued (createKey, rerollKey): the only answer that holds the key itself. */
export interface NewKey {
  keyId: string
  key: string
}

/** A key's counts per bucket, oldest first; buckets with none left out. */
export interface Verifications {
  verifications: { time: number; success: number; rateLimited: number; usageExceeded: number }[]
}

export interface ListedApi {
  id: string
  name: string
  createdAt: number
}

export interface Identity {
  id: string
  externalId: string
  meta: Record<string, unknown>
  ratelimits: NamedRateLimit[]
  usageThresholds?: UsageThreshold[]
}

export type ListedIdentity = Omit<Identity, 'meta' | 'usageThresholds'>

export interface Permission {
  id: string
  name: string
  slug: string
  description?: string
}

/** A permission a role grants: `name` is its slug. */
export interface PermissionRef {
  id: string
  name: string
}

export interface Role {
  id: string
  name: string
  description?: string
  permissions: PermissionRef[]
}

export interface Namespace {
  id: string
  name: string
  createdAt: number
}

export interface Override {
  id: string
  /** An identifier, or a pattern where `*` stands for any characters. */
  identifier: string
  limit: number
  duration: number
  async: boolean
}

/** A stored root key: never the key nor its hash. */
export interface RootKey {
  id: string
  name?: string
  start?: string
  permissions: string[]
  createdAt: number
  lastUsedAt?: number
}

/** A webhook endpoint: never its signing secret. */
export interface WebhookEndpoint {
  endpointId: string
  url: string
  description?: string
  /** The event types it receives; empty: every type but the opt-in ones (usage.*: named to be sent). */
  eventTypes: string[]
  /** The apis it is scoped to: only events about them; empty: every api, and the events about none. */
  apiIds: string[]
  enabled: boolean
  createdAt: number
  updatedAt?: number
  /** Set for a meter export: the billing provider its usage goes to (never its credential). */
  export?: { provider: string; meter: string; measure: string; customerField?: string }
}

/** What an endpoint answered to one request: its status, or why none came. */
interface Exchange {
  deliveryId: string
  eventId: string
  eventType: string
  at: number
  status?: number
  error?: string
  latencyMs: number
  responseSnippet?: string
}

export interface DeliveryAttempt extends Exchange {
  attempt: number
  /** failed: a test event not answered 2xx, never retried. */
  outcome: 'delivered' | 'retry' | 'dead' | 'failed'
  test?: true
}

/** A delivery given up after the retry window. */
export interface DeadDelivery {
  deliveryId: string
  eventId: string
  attempts: number
  queuedAt: number
}

/** What webhooks.sendTest sent and what came back. */
export interface TestDelivery extends Exchange {
  delivered: boolean
}
