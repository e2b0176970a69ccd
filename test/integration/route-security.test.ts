import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { isV2Operation, OPERATIONS, operationPath } from '../../control-plane/openapi/operations.js'
import { MAX_LISTED } from '../../control-plane/permissions/wire/rbac-schemas.js'
import { newId } from '../../shared/ids.js'
import { generateRootKey, hashKey } from '../../shared/keys/key-material.js'
import {
  MANAGE_ROOT_KEYS,
  ROOT_KEY_ACTIONS,
  ROOT_KEY_RESOURCES,
  type ResourceAction,
  type RootKeyAction as Action,
} from '../../shared/root-keys/root-key-actions.js'
import { grantsOn } from '../support/rbac.js'
import { namespaceOf } from '../support/ratelimits.js'
import { startTestControlPlane, TEST_ROOT_KEY, type TestServer } from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ChdbEngine } from '../../control-plane/analytics/engine/chdb-engine.js'
import { ensureAnalyticsSchema } from '../../control-plane/analytics/engine/analytics-tables.js'

/**
 * Security of every management route, from one table per wire format: each operation of OPERATIONS marked
 * `rootKey: true` must refuse a missing, a wrong and an under-privileged root key, and take a good one. v1's
 * operations are listed from OPERATIONS, not from the table, so a new route without a row fails here instead of
 * going untested (and openapi.test.ts ties OPERATIONS to the server's real routes); v2's from the routes the server
 * serves under /v2/ (the table has rows for v2 operations other branches are still writing), so a v2 route
 * without a row fails here too.
 */

/** What v1 answers a caller it cannot authenticate: 403, as Unkey v1 did (the code tells the two 403s apart). */
const UNAUTHENTICATED_STATUS = 403
const UNAUTHENTICATED_CODE = 'UNAUTHORIZED'
const FORBIDDEN_STATUS = 403
const FORBIDDEN_CODE = 'INSUFFICIENT_PERMISSIONS'

/** Every root-key action: the under-privileged keys hold all of them but the ones a route needs. */
const ACTIONS = ROOT_KEY_ACTIONS

/** Made fresh for every test, so that a destructive call (delete, reroll) never spoils another test. */
interface Fixture {
  /** The api the call is about. */
  apiId: string
  /** A key of that api, with credits, a permission and a role (so that every write has something to change). */
  keyId: string
  /** That key in plaintext: an ordinary key, which must never pass as a root key. */
  key: string
  /** A stored root key with read_key on the api: what the rootKeys.* calls act on. */
  rootKeyId: string
  /** A permission and a role of its own, which the key holds. */
  permissionId: string
  permissionSlug: string
  roleId: string
  roleName: string
  /** A rate-limit namespace of its own, with an override for OVERRIDDEN. */
  namespaceId: string
  namespaceName: string
  /** The identity of the key's externalId (createKey made it). */
  identityId: string
  externalId: string
  /** A webhook endpoint of its own (ENDPOINT_URL), scoped to the api. */
  endpointId: string
  /** A portal over the api, and a session of it (v2's portal.* rows). */
  portalId: string
  portalSlug: string
  sessionId: string
}

/** The identifier the fixture's namespace has an override for. */
const OVERRIDDEN = 'user_123'
/**
 * Where the fixtures' webhook endpoints are: the discard port of this machine, which the servers here allow
 * (WEBHOOK_POLICY), so that nothing is ever sent beyond it.
 */
const ENDPOINT_URL = 'http://127.0.0.1:9/security-table'
const WEBHOOK_POLICY = { allowPrivateAddresses: true }

type Method = 'GET' | 'POST'
/** A request without its URL: the URL is made from the operation id, so a row cannot call another route. */
type Call = { method: 'GET'; query: Record<string, string> } | { method: 'POST'; body: object }
interface Request {
  method: Method | 'HEAD'
  url: string
  body?: unknown
}

/**
 * A permission a route needs: an action on the fixture's api (`read_key`), an action on every api
 * (`*.create_api`: only `api.*.create_api` or `*` hold it), managing root keys, or `*` itself (admin).
 */
type Need =
  | Action
  | `*.${Action}`
  | typeof MANAGE_ROOT_KEYS
  | '*'
  | `rbac.*.${ResourceAction<'rbac'>}`
  | `identity.*.${ResourceAction<'identity'>}`
  | `ratelimit.*.${ResourceAction<'ratelimit'>}`
  | `webhook.*.${ResourceAction<'webhook'>}`
  | `portal.*.${ResourceAction<'portal'>}`

/** The resources whose permissions are written whole in a row (`rbac.*.create_role`), not per api. */
const SCOPED_RESOURCES = ['rbac', 'identity', 'ratelimit', 'webhook', 'portal'] as const
/**
 * A need, or alternatives any one of which will do (Keygate's permission and the one Unkey's clients hold, as for
 * the analytics reads).
 */
type Requirement = Need | { anyOf: [Need, Need, ...Need[]] }
const alternatives = (requirement: Requirement): Need[] =>
  typeof requirement === 'string' ? [requirement] : requirement.anyOf
const labelOf = (requirement: Requirement) => alternatives(requirement).join(' or ')

interface Row {
  /** Every permission the route needs; a root key lacking any one of them gets 403. */
  needs: [Requirement, ...Requirement[]]
  /** A call that succeeds (200) for a root key with `*`. */
  call: (fixture: Fixture) => Call
}

const get = (query: Record<string, string> = {}): Call => ({ method: 'GET', query })
const post = (body: object): Call => ({ method: 'POST', body })

/** The table: one row per management operation (checked against OPERATIONS below). */
const TABLE: Record<string, Row> = {
  'apis.createApi': { needs: ['*.create_api'], call: () => post({ name: 'made by the security table' }) },
  'apis.getApi': { needs: ['read_api'], call: (f) => get({ apiId: f.apiId }) },
  'apis.updateApi': { needs: ['update_api'], call: (f) => post({ apiId: f.apiId, leakPolicy: 'notify' }) },
  'apis.deleteApi': { needs: ['delete_api'], call: (f) => post({ apiId: f.apiId }) },
  'apis.listApis': { needs: ['*.read_api'], call: () => get() },
  'apis.listKeys': { needs: ['read_key', 'read_api'], call: (f) => get({ apiId: f.apiId }) },
  'apis.deleteKeys': { needs: ['delete_key'], call: (f) => post({ apiId: f.apiId }) },
  'keys.createKey': { needs: ['create_key'], call: (f) => post({ apiId: f.apiId, name: 'another' }) },
  'keys.getKey': { needs: ['read_key'], call: (f) => get({ keyId: f.keyId }) },
  'keys.updateKey': { needs: ['update_key'], call: (f) => post({ keyId: f.keyId, name: 'renamed', enabled: false }) },
  'keys.deleteKey': { needs: ['delete_key'], call: (f) => post({ keyId: f.keyId }) },
  // The fixture's key has an identity: the new key is bound to it, which needs the right to read it.
  'keys.rerollKey': {
    needs: ['create_key', 'update_key', 'identity.*.read_identity'],
    call: (f) => post({ keyId: f.keyId }),
  },
  'keys.whoami': { needs: ['read_key'], call: (f) => post({ key: f.key }) },
  'keys.reportLeak': { needs: ['report_leak'], call: (f) => post({ key: f.key, source: 'security-table' }) },
  'keys.updateRemaining': { needs: ['update_key'], call: (f) => post({ keyId: f.keyId, op: 'decrement', value: 1 }) },
  'keys.getVerifications': { needs: [{ anyOf: ['read_analytics', 'read_key'] }], call: (f) => get({ keyId: f.keyId }) },
  // Unkey's rbac actions, and update_key on the key's api (Keygate's, as v2: Unkey v1 asked no api right).
  'keys.addPermissions': {
    needs: ['update_key', 'rbac.*.add_permission_to_key'],
    call: (f) => post({ keyId: f.keyId, permissions: [{ name: f.permissionSlug }] }),
  },
  // Setting what the key holds already takes nothing away: adding is all it needs (taking away: key-permissions.test).
  'keys.setPermissions': {
    needs: ['update_key', 'rbac.*.add_permission_to_key'],
    call: (f) => post({ keyId: f.keyId, permissions: [{ id: f.permissionId }] }),
  },
  'keys.removePermissions': {
    needs: ['update_key', 'rbac.*.remove_permission_from_key'],
    call: (f) => post({ keyId: f.keyId, permissions: [{ name: f.permissionSlug }] }),
  },
  'keys.addRoles': {
    needs: ['update_key', 'rbac.*.add_role_to_key'],
    call: (f) => post({ keyId: f.keyId, roles: [{ id: f.roleId }] }),
  },
  'keys.setRoles': {
    needs: ['update_key', 'rbac.*.add_role_to_key'],
    call: (f) => post({ keyId: f.keyId, roles: [{ name: f.roleName }] }),
  },
  'keys.removeRoles': {
    needs: ['update_key', 'rbac.*.remove_role_from_key'],
    call: (f) => post({ keyId: f.keyId, roles: [{ name: f.roleName }] }),
  },
  'permissions.createPermission': {
    needs: ['rbac.*.create_permission'],
    call: (f) => post({ name: `made.${f.apiId}` }),
  },
  'permissions.getPermission': {
    needs: ['rbac.*.read_permission'],
    call: (f) => get({ permissionId: f.permissionId }),
  },
  'permissions.listPermissions': { needs: ['rbac.*.read_permission'], call: () => get() },
  'permissions.deletePermission': {
    needs: ['rbac.*.delete_permission'],
    call: (f) => post({ permissionId: f.permissionId }),
  },
  'permissions.createRole': { needs: ['rbac.*.create_role'], call: (f) => post({ name: `made-${f.apiId}` }) },
  'permissions.getRole': { needs: ['rbac.*.read_role'], call: (f) => get({ roleId: f.roleId }) },
  'permissions.listRoles': { needs: ['rbac.*.read_role'], call: () => get() },
  'permissions.deleteRole': { needs: ['rbac.*.delete_role'], call: (f) => post({ roleId: f.roleId }) },
  // The fixture's role grants nothing yet: giving it a permission takes nothing away.
  'permissions.setRolePermissions': {
    needs: ['rbac.*.add_permission_to_role'],
    call: (f) => post({ roleId: f.roleId, permissions: [{ id: f.permissionId }] }),
  },
  'migrations.createKeys': {
    needs: ['create_key'],
    call: (f) => post([{ apiId: f.apiId, hash: { value: hashKey(randomUUID()), variant: 'sha256_base64' } }]),
  },
  'analytics.getVerifications': {
    needs: [{ anyOf: ['read_analytics', 'read_api'] }],
    call: (f) => get({ apiId: f.apiId, start: String(Date.now() - 86_400_000), groupBy: 'hour' }),
  },
  // Usage for billing is analytics: read_api does not read it.
  'analytics.getUsage': {
    needs: ['read_analytics'],
    call: (f) => get({ apiId: f.apiId, start: String(Date.now() - 86_400_000) }),
  },
  'ratelimits.limit': {
    needs: ['ratelimit.*.limit'],
    call: (f) => post({ namespace: f.namespaceName, identifier: 'user_9', limit: 10, duration: 60_000 }),
  },
  'ratelimits.setOverride': {
    needs: ['ratelimit.*.set_override'],
    call: (f) => post({ namespaceId: f.namespaceId, identifier: OVERRIDDEN, limit: 7, duration: 60_000 }),
  },
  'ratelimits.getOverride': {
    needs: ['ratelimit.*.read_override'],
    call: (f) => get({ namespaceId: f.namespaceId, identifier: OVERRIDDEN }),
  },
  'ratelimits.listOverrides': {
    needs: ['ratelimit.*.read_override'],
    call: (f) => get({ namespaceId: f.namespaceId }),
  },
  'ratelimits.listNamespaces': { needs: ['ratelimit.*.read_namespace'], call: () => get() },
  'ratelimits.deleteOverride': {
    needs: ['ratelimit.*.delete_override'],
    call: (f) => post({ namespaceId: f.namespaceId, identifier: OVERRIDDEN }),
  },
  'identities.createIdentity': {
    needs: ['identity.*.create_identity'],
    call: (f) => post({ externalId: `made-${f.apiId}`, meta: { by: 'the security table' } }),
  },
  'identities.getIdentity': { needs: ['identity.*.read_identity'], call: (f) => get({ identityId: f.identityId }) },
  'identities.listIdentities': { needs: ['identity.*.read_identity'], call: () => get() },
  'identities.updateIdentity': {
    needs: ['identity.*.update_identity'],
    call: (f) => post({ externalId: f.externalId, ratelimits: [{ name: 'requests', limit: 10, duration: 60_000 }] }),
  },
  'identities.deleteIdentity': {
    needs: ['identity.*.delete_identity'],
    call: (f) => post({ identityId: f.identityId }),
  },
  'audit.list': { needs: ['*'], call: () => get() },
  // A root key acts only on root keys whose every permission it holds: the fixture's holds read_key.
  'rootKeys.createRootKey': {
    needs: [MANAGE_ROOT_KEYS, 'read_key'],
    call: (f) => post({ name: 'made by the security table', permissions: [`api.${f.apiId}.read_key`] }),
  },
  'rootKeys.listRootKeys': { needs: [MANAGE_ROOT_KEYS], call: () => get() },
  'rootKeys.revokeRootKey': { needs: [MANAGE_ROOT_KEYS, 'read_key'], call: (f) => post({ rootKeyId: f.rootKeyId }) },
  'rootKeys.rollRootKey': { needs: [MANAGE_ROOT_KEYS, 'read_key'], call: (f) => post({ rootKeyId: f.rootKeyId }) },
  // A root key reads what an endpoint it makes, widens or replays to is sent: for one scoped to the api, its keys.
  'webhooks.createEndpoint': {
    needs: ['webhook.*.create_endpoint', 'read_key'],
    call: (f) => post({ url: ENDPOINT_URL, apiIds: [f.apiId] }),
  },
  'webhooks.listEndpoints': { needs: ['webhook.*.read_endpoint'], call: () => get() },
  'webhooks.getEndpoint': { needs: ['webhook.*.read_endpoint'], call: (f) => get({ endpointId: f.endpointId }) },
  'webhooks.updateEndpoint': {
    needs: ['webhook.*.update_endpoint', 'read_key'],
    call: (f) => post({ endpointId: f.endpointId, eventTypes: ['key.created'], description: 'changed' }),
  },
  'webhooks.deleteEndpoint': { needs: ['webhook.*.delete_endpoint'], call: (f) => post({ endpointId: f.endpointId }) },
  'webhooks.rotateSecret': {
    needs: ['webhook.*.update_endpoint'],
    call: (f) => post({ endpointId: f.endpointId, graceSeconds: 0 }),
  },
  'webhooks.listAttempts': { needs: ['webhook.*.read_endpoint'], call: (f) => get({ endpointId: f.endpointId }) },
  'webhooks.replay': {
    needs: ['webhook.*.replay', 'read_key'],
    call: (f) => post({ endpointId: f.endpointId, since: 0 }),
  },
  // Example data only: no read right, whatever the endpoint is sent. The discard port refuses it: still a 200.
  'webhooks.sendTest': { needs: ['webhook.*.send_test'], call: (f) => post({ endpointId: f.endpointId }) },
}

const MANAGEMENT = Object.entries(OPERATIONS)
  .filter(([operationId, doc]) => doc.rootKey && !isV2Operation(operationId))
  .map(([operationId]) => operationId)
// Forward-auth is left out: its 401 asks for an API key, which is its purpose (authorize.test.ts), and the control
// plane serves it only in `keygate dev`.
const OPEN = Object.entries(OPERATIONS)
  .filter(([, doc]) => !doc.rootKey && doc.tag !== 'gateway')
  .map(([operationId]) => operationId)

function requestOf(operationId: string, call: Call): Request {
  const url = `/v1/${operationId}`
  if (call.method === 'POST') return { method: 'POST', url, body: call.body }
  const query = new URLSearchParams(call.query).toString()
  return { method: 'GET', url: query ? `${url}?${query}` : url }
}

/**
 * The same route with a request its schema refuses (400 for a root key with `*`): a GET without its required
 * query and with a limit below 1, a POST whose body is not an object.
 */
function malformed(request: Request): Request {
  return request.method === 'POST'
    ? { ...request, body: [] }
    : { method: request.method, url: `${request.url.split('?')[0]}?limit=0` }
}

/** A need as the permission string a root key would hold. */
function permissionOf(need: Need, fixture: Fixture): string {
  if (need === '*' || need === MANAGE_ROOT_KEYS) return need
  if (SCOPED_RESOURCES.some((resource) => need.startsWith(`${resource}.`))) return need
  return need.startsWith('*.') ? `api.${need}` : `api.${fixture.apiId}.${need}`
}

/**
 * Whether holding `held` grants `needed` (both permission strings). The rule of root-key-auth.ts `can`,
 * restated here so that the test does not take the product's word for it.
 */
function grants(held: string, needed: string): boolean {
  if (held === '*') return true
  if (needed === '*') return false
  const [heldScope, heldApi, heldAction] = held.split('.')
  const [neededScope, neededApi, neededAction] = needed.split('.')
  return (
    heldScope === neededScope &&
    (heldApi === '*' || heldApi === neededApi) &&
    (heldAction === '*' || heldAction === neededAction)
  )
}

/**
 * Every permission a root key could hold about the fixture's api, another api and every api, minus those that
 * grant `missing`: the strongest root key that still lacks it. Its 403 shows the route checks that very
 * permission, on the right api.
 */
function everyPermissionBut(missing: string[], fixture: Fixture, otherApiId: string): string[] {
  const scopes = ['*', fixture.apiId, otherApiId]
  const all = [
    '*',
    MANAGE_ROOT_KEYS,
    ...scopes.flatMap((scope) => [...ACTIONS, '*'].map((action) => `api.${scope}.${action}`)),
    ...SCOPED_RESOURCES.flatMap((resource) =>
      [...ROOT_KEY_RESOURCES[resource], '*'].map((action) => `${resource}.*.${action}`),
    ),
  ]
  return all.filter((permission) => !missing.some((needed) => grants(permission, needed)))
}

interface Answer {
  status: number
  body: any
  headers: Record<string, unknown>
}

async function send(server: TestServer, request: Request, authorization?: string): Promise<Answer> {
  const response = await server.app.inject({
    method: request.method,
    url: request.url,
    headers: {
      ...(authorization === undefined ? {} : { authorization }),
      // A body sent as a string is JSON already (a malformed v2 request: a JSON string where an object belongs).
      ...(typeof request.body === 'string' ? { 'content-type': 'application/json' } : {}),
    },
    ...(request.body === undefined ? {} : { payload: request.body as object }),
  })
  let body: unknown
  try {
    body = response.body === '' ? undefined : response.json()
  } catch {
    body = response.body
  }
  return { status: response.statusCode, body, headers: response.headers }
}

const bearer = (key: string) => `Bearer ${key}`
const ADMIN = bearer(TEST_ROOT_KEY)

/** A root key of the store (not the bootstrap key: that one never meets the store's permissions). */
async function storedRootKey(server: TestServer, permissions: string[]): Promise<{ key: string; hash: string }> {
  const { key, hash } = generateRootKey()
  await server.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
  return { key, hash }
}

async function freshFixture(server: TestServer): Promise<Fixture> {
  const api = await send(server, { method: 'POST', url: '/v1/apis.createApi', body: { name: 'security table' } }, ADMIN)
  expect(api.status, JSON.stringify(api.body)).toBe(200)
  const apiId = api.body.apiId as string
  // Its own permission and role (created by createKey), so that deleting one spoils no other test.
  const permissionSlug = `documents.read.${apiId}`
  const roleName = `reader-${apiId}`
  const namespaceName = `security-${apiId}`
  const rootKeyId = newId('root')
  // The key, the root key, the override and the endpoint need only the api: made side by side (on Redis their round
  // trips overlap).
  const [created, , set, endpoint] = await Promise.all([
    send(
      server,
      {
        method: 'POST',
        url: '/v1/keys.createKey',
        body: {
          apiId,
          name: 'fixture',
          remaining: 100,
          permissions: [permissionSlug],
          roles: [roleName],
          externalId: `owner-${apiId}`,
        },
      },
      ADMIN,
    ),
    server.backend.store.rootKeys.createRootKey({
      id: rootKeyId,
      hash: generateRootKey().hash,
      permissions: [`api.${apiId}.read_key`],
      createdAt: Date.now(),
    }),
    send(
      server,
      {
        method: 'POST',
        url: '/v1/ratelimits.setOverride',
        body: { namespaceName, identifier: OVERRIDDEN, limit: 5, duration: 60_000 },
      },
      ADMIN,
    ),
    send(
      server,
      { method: 'POST', url: '/v1/webhooks.createEndpoint', body: { url: ENDPOINT_URL, apiIds: [apiId] } },
      ADMIN,
    ),
  ])
  expect(created.status, JSON.stringify(created.body)).toBe(200)
  expect(set.status, JSON.stringify(set.body)).toBe(200)
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200)
  const rbac = grantsOn(server.backend)
  const [permission, role, namespace, identity] = await Promise.all([
    rbac.permissions.findByName(permissionSlug),
    rbac.roles.findByName(roleName),
    namespaceOf(server.backend, namespaceName),
    send(server, { method: 'GET', url: `/v1/identities.getIdentity?externalId=owner-${apiId}` }, ADMIN),
  ])
  expect(identity.status, JSON.stringify(identity.body)).toBe(200)
  const portalSlug = `security-${++portals}`
  const portal = await send(
    server,
    { method: 'POST', url: '/v2/portal.createPortal', body: { slug: portalSlug, name: 'security', apiIds: [apiId] } },
    ADMIN,
  )
  expect(portal.status, JSON.stringify(portal.body)).toBe(200)
  const session = await send(
    server,
    {
      method: 'POST',
      url: '/v2/portal.createSession',
      body: { portal: portalSlug, externalId: `owner-${apiId}`, scopes: ['keys:read'] },
    },
    ADMIN,
  )
  expect(session.status, JSON.stringify(session.body)).toBe(200)
  return {
    apiId,
    keyId: created.body.keyId,
    key: created.body.key,
    rootKeyId,
    permissionId: permission!.id,
    permissionSlug,
    roleId: role!.id,
    roleName,
    namespaceId: namespace!.id,
    namespaceName,
    identityId: identity.body.id,
    externalId: `owner-${apiId}`,
    endpointId: endpoint.body.endpointId,
    portalId: portal.body.data.portalId,
    portalSlug,
    sessionId: session.body.data.id,
  }
}

/** Portal slugs made so far: each fixture's is new. */
let portals = 0

/**
 * Removes every permission, role, stored root key and webhook endpoint (tests make their own: the fixture's and their
 * callers'). The snapshot lists them all: left to pile up over the ~950 tests of a store they made each snapshot
 * slower than the last, and past MAX_LISTED a listing would no longer show a permission or role a refused call added
 * (nor could a fixture make its endpoint past MAX_WEBHOOK_ENDPOINTS). Straight in the store: nothing the tests check
 * goes through these writes.
 */
async function clearGrants(server: TestServer): Promise<void> {
  const rbac = grantsOn(server.backend)
  const { webhooks } = server.backend.store
  const [permissions, roles, rootKeys, endpoints] = await Promise.all([
    rbac.permissions.list(MAX_LISTED),
    rbac.roles.list(MAX_LISTED),
    server.backend.store.rootKeys.listRootKeys(),
    webhooks.listEndpoints(),
  ])
  await Promise.all([
    ...permissions.map((permission) => rbac.permissions.delete(permission.id)),
    ...roles.map((role) => rbac.roles.delete(role.id)),
    ...rootKeys.map((rootKey) => server.backend.store.rootKeys.revokeRootKey(rootKey.id)),
    ...endpoints.map((endpoint) => webhooks.deleteEndpoint(endpoint.id)),
  ])
}

/**
 * What a refused call must leave as it was: the api, its keys (every field), the stored root keys, the webhook
 * endpoints, and the audit log's newest entry (every management write appends one, so it also catches writes
 * elsewhere, such as a new api, or a secret rotated, which no answer shows).
 */
async function snapshot(server: TestServer, fixture: Fixture) {
  const read = async (url: string) => {
    const { status, body } = await send(server, { method: 'GET', url }, ADMIN)
    return { status, body }
  }
  // Reads only, sent together: on Redis their round trips overlap.
  const [api, keys, rootKeys, permissions, roles, overrides, identity, endpoints, audit] = await Promise.all([
    read(`/v1/apis.getApi?apiId=${fixture.apiId}`),
    read(`/v1/apis.listKeys?apiId=${fixture.apiId}`),
    server.backend.store.rootKeys.listRootKeys(),
    read('/v1/permissions.listPermissions'),
    read('/v1/permissions.listRoles'),
    read(`/v1/ratelimits.listOverrides?namespaceId=${fixture.namespaceId}`),
    read(`/v1/identities.getIdentity?identityId=${fixture.identityId}`),
    read('/v1/webhooks.listEndpoints'),
    read('/v1/audit.list?limit=1'),
  ])
  return {
    api,
    keys,
    // Ids only: a refused call may still record its root key's last use.
    rootKeys: rootKeys.map((rootKey) => rootKey.id),
    permissions,
    roles,
    overrides,
    identity,
    endpoints,
    newestAuditEntry: audit.body.entries[0]?.id ?? null,
  }
}

/** `what` names the route and the caller, so that a failure says which route let whom through. */
function expectRefusal(answer: Answer, status: number, code: string, what: string): void {
  expect({ status: answer.status, code: answer.body?.error?.code }, what).toEqual({ status, code })
  if (code === UNAUTHENTICATED_CODE)
    expect(answer.headers['www-authenticate'], `${what}: WWW-Authenticate`).toBe('Bearer')
}

const describeRequest = (operationId: string, request: Request) => `${operationId} (${request.method} ${request.url})`

/*
 * v2 (Unkey's v2 wire format): every call a POST with a JSON body, every refusal a problem body
 * (shared/http/problem-body.ts) with v2's statuses, which tell the callers apart where v1 answers 403 to all.
 */

/** A v2 refusal: the status and the end of the problem's `type` (after `https://unkey.com/docs/errors/unkey/`). */
interface V2Refusal {
  status: number
  type: string
}
const V2_MISSING: V2Refusal = { status: 400, type: 'authentication/missing' }
const V2_MALFORMED: V2Refusal = { status: 400, type: 'authentication/malformed' }
const V2_UNKNOWN: V2Refusal = { status: 401, type: 'authentication/key_not_found' }
const V2_FORBIDDEN: V2Refusal = { status: 403, type: 'authorization/insufficient_permissions' }
const V2_INVALID_INPUT: V2Refusal = { status: 400, type: 'application/invalid_input' }

/** verifyKey's answer to a root key that may not verify the key: a verdict that tells it nothing (Unkey's). */
const NOT_FOUND_VERDICT = 'a 200 with valid: false and code NOT_FOUND'

interface V2Row {
  /** Every permission the route needs (Unkey's rbac checks in svc/api/routes/v2_<service>_<method>/handler.go). */
  needs: [Requirement, ...Requirement[]]
  /** The body of a call that succeeds (200) for a root key with `*`. */
  body: (fixture: Fixture) => unknown
  /** What a root key lacking a need gets, where Unkey hides more than a 403 would (default 403, v2's Go tests). */
  lacking?: V2Refusal | typeof NOT_FOUND_VERDICT
  /** Where the refusal depends on which need is lacking: the refusal for each (overrides `lacking`). */
  lackingOf?: (need: Requirement) => V2Refusal
  /**
   * The need's action on any api lets the call on (it then reads that api's rows only): a root key lacks it only
   * without it on every api, the fixture's and the other.
   */
  anyApi?: true
}

const PORTAL_NOT_FOUND: V2Refusal = { status: 404, type: 'data/portal_not_found' }
let madePortals = 0

/**
 * The v2 table: one row per v2 operation that takes a root key, served on this branch or not yet (checked against
 * OPERATIONS and the served routes below). The needs are Unkey's v2 handlers', which differ from v1's in places:
 * rerollKey asks create_key only; the key's permission and role calls ask update_key on the key's api as well
 * (removeRoles and setRoles nothing else); setPermissions both rbac actions whatever it changes; setRolePermissions
 * adding and removing. Fixtures are made through v1, over the same store.
 */
const V2_TABLE: Record<string, V2Row> = {
  'v2.apis.createApi': { needs: ['*.create_api'], body: () => ({ name: 'made by the security table' }) },
  'v2.apis.getApi': { needs: ['read_api'], body: (f) => ({ apiId: f.apiId }) },
  'v2.apis.updateApi': { needs: ['update_api'], body: (f) => ({ apiId: f.apiId, ipAllowlist: ['10.0.0.0/8'] }) },
  // Unkey's handlers hide the api from a root key that may not list its keys or create keys in it: the 404 of an api
  // that does not exist (403_existence_leak_test.go), so that a root key cannot find out which apis exist.
  'v2.apis.listKeys': {
    needs: ['read_key', 'read_api'],
    body: (f) => ({ apiId: f.apiId }),
    lacking: { status: 404, type: 'data/api_not_found' },
  },
  'v2.apis.deleteApi': { needs: ['delete_api'], body: (f) => ({ apiId: f.apiId }) },
  'v2.keys.createKey': {
    needs: ['create_key'],
    body: (f) => ({ apiId: f.apiId, name: 'another' }),
    lacking: { status: 404, type: 'data/api_not_found' },
  },
  'v2.keys.getKey': { needs: ['read_key'], body: (f) => ({ keyId: f.keyId }) },
  'v2.keys.updateKey': { needs: ['update_key'], body: (f) => ({ keyId: f.keyId, name: 'renamed', enabled: false }) },
  'v2.keys.deleteKey': { needs: ['delete_key'], body: (f) => ({ keyId: f.keyId }) },
  // A root key that may not verify the key learns nothing about it, not even that it exists (issue 15, Unkey).
  'v2.keys.verifyKey': { needs: ['verify_key'], body: (f) => ({ key: f.key }), lacking: NOT_FOUND_VERDICT },
  // Unkey hides the key from a root key that may not read it: 404, as for a key that does not exist.
  'v2.keys.whoami': {
    needs: ['read_key'],
    body: (f) => ({ key: f.key }),
    lacking: { status: 404, type: 'data/key_not_found' },
  },
  // As whoami: a root key that may not act on the key learns nothing of it.
  'v2.keys.reportLeak': {
    needs: ['report_leak'],
    body: (f) => ({ key: f.key }),
    lacking: { status: 404, type: 'data/key_not_found' },
  },
  'v2.keys.rerollKey': {
    needs: ['create_key', 'identity.*.read_identity'],
    body: (f) => ({ keyId: f.keyId, expiration: 0 }),
  },
  'v2.keys.updateCredits': {
    needs: ['update_key'],
    body: (f) => ({ keyId: f.keyId, operation: 'decrement', value: 1 }),
  },
  'v2.keys.migrateKeys': {
    needs: ['create_key'],
    body: (f) => ({ migrationId: 'sha256', apiId: f.apiId, keys: [{ hash: hashKey(randomUUID()) }] }),
  },
  'v2.keys.addPermissions': {
    needs: ['update_key', 'rbac.*.add_permission_to_key'],
    body: (f) => ({ keyId: f.keyId, permissions: [f.permissionSlug] }),
  },
  'v2.keys.removePermissions': {
    needs: ['update_key', 'rbac.*.remove_permission_from_key'],
    body: (f) => ({ keyId: f.keyId, permissions: [f.permissionSlug] }),
  },
  'v2.keys.setPermissions': {
    needs: ['update_key', 'rbac.*.add_permission_to_key', 'rbac.*.remove_permission_from_key'],
    body: (f) => ({ keyId: f.keyId, permissions: [f.permissionSlug] }),
  },
  'v2.keys.addRoles': {
    needs: ['update_key', 'rbac.*.add_role_to_key'],
    body: (f) => ({ keyId: f.keyId, roles: [f.roleName] }),
  },
  'v2.keys.removeRoles': { needs: ['update_key'], body: (f) => ({ keyId: f.keyId, roles: [f.roleName] }) },
  'v2.keys.setRoles': { needs: ['update_key'], body: (f) => ({ keyId: f.keyId, roles: [f.roleName] }) },
  'v2.identities.createIdentity': {
    needs: ['identity.*.create_identity'],
    body: (f) => ({ externalId: `made-${f.apiId}`, meta: { by: 'the security table' } }),
  },
  'v2.identities.getIdentity': { needs: ['identity.*.read_identity'], body: (f) => ({ identity: f.identityId }) },
  // The store holds identities (the fixtures'): Unkey checks read_identity on each one listed.
  'v2.identities.listIdentities': { needs: ['identity.*.read_identity'], body: () => ({}) },
  'v2.identities.updateIdentity': {
    needs: ['identity.*.update_identity'],
    body: (f) => ({ identity: f.externalId, ratelimits: [{ name: 'requests', limit: 10, duration: 60_000 }] }),
  },
  'v2.identities.deleteIdentity': {
    needs: ['identity.*.delete_identity'],
    body: (f) => ({ identity: f.identityId }),
  },
  'v2.permissions.createPermission': {
    needs: ['rbac.*.create_permission'],
    body: (f) => ({ name: `made.${f.apiId}`, slug: `made.${f.apiId}` }),
  },
  'v2.permissions.getPermission': {
    needs: ['rbac.*.read_permission'],
    body: (f) => ({ permission: f.permissionId }),
  },
  'v2.permissions.listPermissions': { needs: ['rbac.*.read_permission'], body: () => ({}) },
  'v2.permissions.deletePermission': {
    needs: ['rbac.*.delete_permission'],
    body: (f) => ({ permission: f.permissionId }),
  },
  'v2.permissions.createRole': { needs: ['rbac.*.create_role'], body: (f) => ({ name: `made-${f.apiId}` }) },
  'v2.permissions.getRole': { needs: ['rbac.*.read_role'], body: (f) => ({ role: f.roleId }) },
  'v2.permissions.listRoles': { needs: ['rbac.*.read_role'], body: () => ({}) },
  'v2.permissions.deleteRole': { needs: ['rbac.*.delete_role'], body: (f) => ({ role: f.roleId }) },
  'v2.permissions.setRolePermissions': {
    needs: ['rbac.*.add_permission_to_role', 'rbac.*.remove_permission_from_role'],
    body: (f) => ({ roleId: f.roleId, permissions: [f.permissionSlug] }),
  },
  // A root key reads the rows of the apis (or namespaces) it may read analytics of; with none, 403 (Unkey's).
  'v2.analytics.getVerifications': {
    needs: ['read_analytics'],
    anyApi: true,
    body: () => ({ query: 'SELECT count(*) AS n FROM key_verifications_v1' }),
  },
  'v2.analytics.getUsage': {
    needs: ['read_analytics'],
    body: (f) => ({ apiIds: [f.apiId], start: Date.now() - 86_400_000 }),
  },
  'v2.analytics.getRatelimits': {
    needs: ['ratelimit.*.read_analytics'],
    body: () => ({ query: 'SELECT count(*) AS n FROM ratelimits_v1' }),
  },
  'v2.ratelimit.limit': {
    needs: ['ratelimit.*.limit'],
    body: (f) => ({ namespace: f.namespaceName, identifier: 'user_9', limit: 10, duration: 60_000 }),
  },
  'v2.ratelimit.multiLimit': {
    needs: ['ratelimit.*.limit'],
    body: (f) => [{ namespace: f.namespaceName, identifier: 'user_9', limit: 10, duration: 60_000 }],
  },
  'v2.ratelimit.setOverride': {
    needs: ['ratelimit.*.set_override'],
    body: (f) => ({ namespace: f.namespaceName, identifier: OVERRIDDEN, limit: 7, duration: 60_000 }),
  },
  // An override a root key may not read is one that does not exist (Unkey's: identifiers cannot be enumerated).
  'v2.ratelimit.getOverride': {
    needs: ['ratelimit.*.read_override'],
    body: (f) => ({ namespace: f.namespaceName, identifier: OVERRIDDEN }),
    lacking: { status: 404, type: 'data/ratelimit_override_not_found' },
  },
  'v2.ratelimit.listOverrides': {
    needs: ['ratelimit.*.read_override'],
    body: (f) => ({ namespace: f.namespaceName }),
  },
  'v2.ratelimit.deleteOverride': {
    needs: ['ratelimit.*.delete_override'],
    body: (f) => ({ namespace: f.namespaceName, identifier: OVERRIDDEN }),
  },
  // Keygate's portal management: a portal a root key may not act on is one that does not exist (as Unkey hides it
  // from createSession); an api the root key may not read is the api's 404.
  'v2.portal.createPortal': {
    needs: ['portal.*.create_portal', 'read_api'],
    body: (f) => ({ slug: `made-${++madePortals}`, name: 'made by the security table', apiIds: [f.apiId] }),
    lackingOf: (need) => (need === 'read_api' ? { status: 404, type: 'data/api_not_found' } : V2_FORBIDDEN),
  },
  'v2.portal.getPortal': {
    needs: ['portal.*.read_portal'],
    body: (f) => ({ portal: f.portalId }),
    lacking: PORTAL_NOT_FOUND,
  },
  'v2.portal.updatePortal': {
    needs: ['portal.*.update_portal'],
    body: (f) => ({ portal: f.portalSlug, name: 'renamed' }),
    lacking: PORTAL_NOT_FOUND,
  },
  'v2.portal.deletePortal': {
    needs: ['portal.*.delete_portal'],
    body: (f) => ({ portal: f.portalId }),
    lacking: PORTAL_NOT_FOUND,
  },
  // Unkey's two stages: the portal's permission (404 without it), then a right backing each scope (403).
  'v2.portal.createSession': {
    needs: ['portal.*.create_portal_session', 'read_analytics'],
    body: (f) => ({ portal: f.portalSlug, externalId: f.externalId, scopes: ['analytics:read'] }),
    lackingOf: (need) => (need === 'read_analytics' ? V2_FORBIDDEN : PORTAL_NOT_FOUND),
  },
  'v2.portal.revokeSession': {
    needs: ['portal.*.revoke_portal_session'],
    body: (f) => ({ sessionId: f.sessionId }),
    lacking: PORTAL_NOT_FOUND,
  },
}

/** The v2 operations of OPERATIONS that take a root key: the table must have a row for each. */
const V2_MANAGEMENT = Object.entries(OPERATIONS)
  .filter(([operationId, doc]) => doc.rootKey && isV2Operation(operationId))
  .map(([operationId]) => operationId)

/**
 * The v2 operations the control plane serves, read from its route tree (`POST /v2/keys.createKey` →
 * `v2.keys.createKey`), whether OPERATIONS has them or not. Read before the tests are collected: the tests below
 * are made for exactly these.
 */
async function servedV2Operations(): Promise<string[]> {
  const server = await startTestControlPlane()
  try {
    // A route's line is at the root of the tree, or under `/` (indented, without its slash) when `/` is a route too.
    return server.app
      .printRoutes({ commonPrefix: false })
      .split('\n')
      .map((line) => /^[│ ]*[├└]── \/?v2\/([^ ]+) \(/.exec(line)?.[1])
      .filter((operation): operation is string => operation !== undefined)
      .map((operation) => `v2.${operation}`)
  } finally {
    await server.close()
  }
}
const SERVED_V2 = await servedV2Operations()
/** Served v2 routes that need a root key: all but those OPERATIONS says are open (liveness). */
const SERVED_V2_MANAGEMENT = SERVED_V2.filter((operationId) => OPERATIONS[operationId]?.rootKey !== false)

const labelOfRefusal = (refusal: V2Refusal | typeof NOT_FOUND_VERDICT) =>
  typeof refusal === 'string' ? refusal : `${refusal.status} ${refusal.type}`

/**
 * A root key made as `keygate root-key create` and rootKeys.createRootKey make them (by the bootstrap key), not
 * written to the store directly: v2's verifyKey, served beside the management API, knows root keys from what the
 * control plane publishes of them.
 */
async function createdRootKey(server: TestServer, permissions: string[]): Promise<{ key: string; hash: string }> {
  const created = await send(
    server,
    { method: 'POST', url: '/v1/rootKeys.createRootKey', body: { name: 'security table', permissions } },
    ADMIN,
  )
  expect(created.status, JSON.stringify(created.body)).toBe(200)
  return { key: created.body.key, hash: hashKey(created.body.key) }
}

/** `what` names the route and the caller; a refusal is a problem body with v2's status and type. */
function expectProblem(answer: Answer, refusal: V2Refusal, what: string): void {
  expect({ status: answer.status, type: answer.body?.error?.type }, what).toEqual({
    status: refusal.status,
    type: `https://unkey.com/docs/errors/unkey/${refusal.type}`,
  })
  // Unkey's SDK reads deleteIdentity's errors only as problem+json (shared/http/problem-body.ts).
  const type = what.includes('v2.identities.deleteIdentity') ? /^application\/problem\+json/ : /^application\/json/
  expect(answer.headers['content-type'], `${what}: Content-Type`).toMatch(type)
  expect(answer.body, what).toMatchObject({
    meta: { requestId: answer.headers['x-request-id'] },
    error: { title: expect.any(String), detail: expect.any(String), status: refusal.status },
  })
  // A 400 says where the problem is: the Authorization header, for a caller it cannot authenticate.
  if (refusal === V2_MISSING || refusal === V2_MALFORMED)
    expect(answer.body.error.errors, what).toEqual([{ location: 'header.authorization', message: expect.any(String) }])
}

// One redis-server for the file; the memory store needs none.
const redis = useRedisServer()
// One embedded analytics engine for the file (chDB allows one per process): both stores' control planes query it.
const analyticsDirectory = mkdtempSync(join(tmpdir(), 'keygate-route-security-'))
const analyticsEngine = new ChdbEngine(analyticsDirectory)
beforeAll(() => ensureAnalyticsSchema(analyticsEngine))
afterAll(async () => {
  await analyticsEngine.close()
  rmSync(analyticsDirectory, { recursive: true, force: true })
})

describe('the security table', () => {
  it('has a row for every management operation of OPERATIONS, and none for anything else', () => {
    const missing = MANAGEMENT.filter((operationId) => !(operationId in TABLE))
    const unknown = Object.keys(TABLE).filter((operationId) => !MANAGEMENT.includes(operationId))
    expect(missing, 'management operations without a row in TABLE: add one').toEqual([])
    expect(unknown, 'rows in TABLE that are no management operation of OPERATIONS').toEqual([])
    expect(MANAGEMENT.length).toBeGreaterThan(15)
  })
})

describe('the v2 security table', () => {
  it('has a row for every v2 operation of OPERATIONS that takes a root key (served yet or not), and none for anything else', () => {
    const missing = V2_MANAGEMENT.filter((operationId) => !(operationId in V2_TABLE))
    const unknown = Object.keys(V2_TABLE).filter((operationId) => !V2_MANAGEMENT.includes(operationId))
    expect(missing, 'v2 operations without a row in V2_TABLE: add one').toEqual([])
    expect(unknown, 'rows in V2_TABLE that are no v2 operation of OPERATIONS taking a root key').toEqual([])
    expect(V2_MANAGEMENT.length).toBe(50)
  })

  it('has a row for every /v2/ route the control plane serves, liveness aside', () => {
    const missing = SERVED_V2_MANAGEMENT.filter((operationId) => !(operationId in V2_TABLE))
    expect(missing, 'served v2 routes without a row in V2_TABLE: add one').toEqual([])
    expect(SERVED_V2).toContain('v2.liveness')
    expect(SERVED_V2_MANAGEMENT).toContain('v2.apis.createApi')
    expect(SERVED_V2_MANAGEMENT).not.toContain('v2.liveness')
  })
})

for (const store of ['memory', 'redis'] as const) {
  describe(`management routes on the ${store} store`, () => {
    let server: TestServer
    /** An api the fixture's calls are not about: permissions on it must not count. */
    let otherApiId: string

    beforeAll(async () => {
      server = await startTestControlPlane({
        ...(store === 'redis' ? { redisUrl: redis.url } : {}),
        webhookPolicy: WEBHOOK_POLICY,
        analytics: { engine: analyticsEngine, holder: `route-security-${store}` },
      })
      otherApiId = (await freshFixture(server)).apiId
    })
    afterAll(async () => {
      await server?.close()
    })
    // Between tests, every 20 (deleting 40 records side by side takes about as long as deleting 2): the lists a
    // snapshot reads stay short.
    let sinceCleared = 0
    afterEach(async () => {
      if (++sinceCleared < 20) return
      sinceCleared = 0
      await clearGrants(server)
    })

    // The flag is true to the server: an operation said to be open answers a stranger with something other
    // than a refusal of the caller. (A management route flagged open would skip the table otherwise.)
    it.each(OPEN)('%s, said to need no root key, does not ask a stranger for one', async (operationId) => {
      const document = (await send(server, { method: 'GET', url: '/openapi.json' })).body
      const found = Object.entries(document.paths as Record<string, Record<string, { operationId: string }>>)
        .flatMap(([path, methods]) =>
          Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), id: op.operationId })),
        )
        .find((route) => route.id === operationId)
      expect(found, `${operationId} is not in /openapi.json`).toBeDefined()
      const answer = await send(server, {
        method: found!.method as Method,
        url: found!.path,
        ...(found!.method === 'POST' ? { body: {} } : {}),
      })
      expect(answer.body?.error?.code, `${operationId} answered ${answer.status} without Authorization`).not.toBe(
        UNAUTHENTICATED_CODE,
      )
      expect(answer.headers['www-authenticate']).toBeUndefined()
    })

    describe.each(MANAGEMENT)('%s', (operationId) => {
      const row = TABLE[operationId]
      if (!row) {
        // Fails (never skips) under the route's own name, next to the completeness check above.
        it('has a row in the security table', () => {
          throw new Error(
            `${operationId} is a management operation (OPERATIONS says rootKey: true) without a row in TABLE`,
          )
        })
        return
      }

      /** A fresh fixture, the row's request for it, and what the store looked like before the call. */
      async function arrange() {
        const fixture = await freshFixture(server)
        const request = requestOf(operationId, row!.call(fixture))
        return { fixture, request, what: describeRequest(operationId, request) }
      }

      /** Sends the request as `authorization` and checks it was refused with `status`/`code`, changing nothing. */
      async function expectRefusedAndUnchanged(
        fixture: Fixture,
        request: Request,
        authorization: string | undefined,
        status: number,
        code: string,
        what: string,
      ) {
        const before = await snapshot(server, fixture)
        expectRefusal(await send(server, request, authorization), status, code, what)
        expect(await snapshot(server, fixture), `${what}: the refused call changed the store`).toEqual(before)
      }

      it(`refuses a call without Authorization: ${UNAUTHENTICATED_STATUS}, WWW-Authenticate: Bearer, nothing changed`, async () => {
        const { fixture, request, what } = await arrange()
        await expectRefusedAndUnchanged(
          fixture,
          request,
          undefined,
          UNAUTHENTICATED_STATUS,
          UNAUTHENTICATED_CODE,
          `${what} without Authorization`,
        )
        if (request.method === 'GET') {
          // Fastify answers HEAD on every GET route: it must be behind the same door.
          const head = await send(server, { ...request, method: 'HEAD' })
          expect(head.status, `HEAD ${request.url} without Authorization`).toBe(UNAUTHENTICATED_STATUS)
        }
      })

      it(`refuses a stranger before reading the request: ${UNAUTHENTICATED_STATUS} for a malformed one, not 400`, async () => {
        const { fixture, request, what } = await arrange()
        const bad = malformed(request)
        // With a good root key the malformed request is a 400: so the stranger's answer is about the key.
        expect((await send(server, bad, ADMIN)).status, `${what}, malformed, as the bootstrap root key`).toBe(400)
        await expectRefusedAndUnchanged(
          fixture,
          bad,
          undefined,
          UNAUTHENTICATED_STATUS,
          UNAUTHENTICATED_CODE,
          `${what}, malformed, without Authorization`,
        )
      })

      const wrongKeys: [string, (fixture: Fixture, adminHash: string) => string][] = [
        ['the bootstrap root key in another scheme (Basic)', () => `Basic ${TEST_ROOT_KEY}`],
        ['an empty Bearer', () => 'Bearer '],
        ['an unknown root key', () => bearer(generateRootKey().key)],
        ['an ordinary key of the api', (fixture) => bearer(fixture.key)],
        ["a stored root key's hash (what the store holds is no key)", (_fixture, adminHash) => bearer(adminHash)],
      ]
      it.each(wrongKeys)(`refuses %s: ${UNAUTHENTICATED_STATUS}, nothing changed`, async (who, authorization) => {
        const { fixture, request, what } = await arrange()
        const admin = await storedRootKey(server, ['*'])
        await expectRefusedAndUnchanged(
          fixture,
          request,
          authorization(fixture, admin.hash),
          UNAUTHENTICATED_STATUS,
          UNAUTHENTICATED_CODE,
          `${what} as ${who}`,
        )
      })

      it.each(row.needs.map((need) => [labelOf(need), need] as const))(
        `refuses a stored root key with every permission but %s: ${FORBIDDEN_STATUS}, nothing changed`,
        async (_label, need) => {
          const { fixture, request, what } = await arrange()
          const missing = alternatives(need).map((alternative) => permissionOf(alternative, fixture))
          const permissions = everyPermissionBut(missing, fixture, otherApiId)
          // The key is strong: all of the other api, and every other permission the route needs.
          expect(permissions).toContain(`api.${otherApiId}.*`)
          for (const other of row.needs.filter((n) => n !== need))
            expect(
              alternatives(other).some((alternative) =>
                permissions.some((held) => grants(held, permissionOf(alternative, fixture))),
              ),
            ).toBe(true)
          const { key } = await storedRootKey(server, permissions)
          await expectRefusedAndUnchanged(
            fixture,
            request,
            bearer(key),
            FORBIDDEN_STATUS,
            FORBIDDEN_CODE,
            `${what} as a root key without ${missing.join(' or ')}`,
          )
        },
      )

      it('answers 200 to a stored root key with *: the row is a valid request', async () => {
        const { request, what } = await arrange()
        const { key } = await storedRootKey(server, ['*'])
        const answer = await send(server, request, bearer(key))
        expect(answer.status, `${what} as a root key with *: ${JSON.stringify(answer.body)}`).toBe(200)
      })

      // Every first alternative together, then each other alternative in place of its need's first.
      const choices = [
        [0, alternatives(row.needs[0])[0]!] as const,
        ...row.needs.flatMap((need, i) =>
          alternatives(need)
            .slice(1)
            .map((alternative) => [i, alternative] as const),
        ),
      ]
      it.each(choices)(
        `answers 200 to a root key with exactly the needs of ${row.needs.map(labelOf).join(' and ')} (need %i as %s)`,
        async (index, chosen) => {
          const { fixture, request, what } = await arrange()
          const permissions = row.needs.map((need, i) =>
            permissionOf(i === index ? chosen : alternatives(need)[0]!, fixture),
          )
          const { key } = await storedRootKey(server, permissions)
          const answer = await send(server, request, bearer(key))
          expect(
            answer.status,
            `${what} as a root key with ${permissions.join(', ')}: ${JSON.stringify(answer.body)}`,
          ).toBe(200)
        },
      )
    })
    describe.each(SERVED_V2_MANAGEMENT)('%s', (operationId) => {
      const row = V2_TABLE[operationId]
      if (!row) {
        it('has a row in the v2 security table', () => {
          throw new Error(`${operationId} is served under /v2/ and takes a root key, without a row in V2_TABLE`)
        })
        return
      }
      const url = operationPath(operationId)

      async function arrange() {
        const fixture = await freshFixture(server)
        const request: Request = { method: 'POST', url, body: row!.body(fixture) }
        return { fixture, request, what: describeRequest(operationId, request) }
      }

      /** Sends the request as `authorization`, checks the refusal, and that the store is as it was. */
      async function expectRefusedAndUnchanged(
        fixture: Fixture,
        request: Request,
        authorization: string | undefined,
        refusal: V2Refusal | typeof NOT_FOUND_VERDICT,
        what: string,
      ) {
        const before = await snapshot(server, fixture)
        const answer = await send(server, request, authorization)
        if (refusal === NOT_FOUND_VERDICT) {
          expect({ status: answer.status, data: answer.body?.data }, what).toMatchObject({
            status: 200,
            data: { valid: false, code: 'NOT_FOUND' },
          })
          // Nothing of the key, not even that it exists: the very answer for a key that does not.
          const unknown = {
            ...request,
            body: { ...(request.body as object), key: `sk_${randomUUID().replaceAll('-', '')}` },
          }
          expect(answer.body.data, what).toEqual((await send(server, unknown, authorization)).body?.data)
        } else expectProblem(answer, refusal, what)
        expect(await snapshot(server, fixture), `${what}: the refused call changed the store`).toEqual(before)
      }

      const strangers: [string, V2Refusal, (fixture: Fixture, adminHash: string) => string | undefined][] = [
        ['no Authorization', V2_MISSING, () => undefined],
        ['an empty Authorization', V2_MISSING, () => ''],
        ['Basic x', V2_MALFORMED, () => 'Basic x'],
        ['the bootstrap root key in another scheme (Basic)', V2_MALFORMED, () => `Basic ${TEST_ROOT_KEY}`],
        ['an empty Bearer', V2_MALFORMED, () => 'Bearer '],
        ['an unknown root key', V2_UNKNOWN, () => bearer(generateRootKey().key)],
        ['an ordinary key of the api', V2_UNKNOWN, (fixture) => bearer(fixture.key)],
        ["a stored root key's hash (what the store holds is no key)", V2_UNKNOWN, (_f, adminHash) => bearer(adminHash)],
      ]
      const cases = strangers.map(
        ([who, refusal, authorization]) => [who, labelOfRefusal(refusal), refusal, authorization] as const,
      )
      it.each(cases)(
        'refuses %s: %s in a problem body, nothing changed',
        async (who, _label, refusal, authorization) => {
          const { fixture, request, what } = await arrange()
          const admin = await createdRootKey(server, ['*'])
          await expectRefusedAndUnchanged(
            fixture,
            request,
            authorization(fixture, admin.hash),
            refusal,
            `${what} as ${who}`,
          )
        },
      )

      it('refuses a stranger before reading the request: authentication/missing for a malformed one, not invalid_input', async () => {
        const { fixture, request, what } = await arrange()
        // A JSON string where the body belongs: every v2 body is an object (multiLimit's a list).
        const bad: Request = { ...request, body: JSON.stringify('malformed') }
        expectProblem(await send(server, bad, ADMIN), V2_INVALID_INPUT, `${what}, malformed, as the bootstrap root key`)
        await expectRefusedAndUnchanged(
          fixture,
          bad,
          undefined,
          V2_MISSING,
          `${what}, malformed, without Authorization`,
        )
      })

      const refusalOf = (need: Requirement) => row.lackingOf?.(need) ?? row.lacking ?? V2_FORBIDDEN
      it.each(row.needs.map((need) => [labelOf(need), labelOfRefusal(refusalOf(need)), need] as const))(
        `refuses a stored root key with every permission but %s: %s, nothing changed`,
        async (_label, _refusal, need) => {
          const { fixture, request, what } = await arrange()
          const missing = alternatives(need).flatMap((alternative) => {
            const permission = permissionOf(alternative, fixture)
            return row.anyApi
              ? [permission, permission.replace(`api.${fixture.apiId}.`, `api.${otherApiId}.`)]
              : [permission]
          })
          const permissions = everyPermissionBut(missing, fixture, otherApiId)
          if (!row.anyApi) expect(permissions).toContain(`api.${otherApiId}.*`)
          for (const other of row.needs.filter((n) => n !== need))
            expect(
              alternatives(other).some((alternative) =>
                permissions.some((held) => grants(held, permissionOf(alternative, fixture))),
              ),
            ).toBe(true)
          const { key } = await createdRootKey(server, permissions)
          await expectRefusedAndUnchanged(
            fixture,
            request,
            bearer(key),
            refusalOf(need),
            `${what} as a root key without ${missing.join(' or ')}`,
          )
        },
      )

      it('answers 200 to a stored root key with *: the row is a valid request', async () => {
        const { request, what } = await arrange()
        const { key } = await createdRootKey(server, ['*'])
        const answer = await send(server, request, bearer(key))
        expect(answer.status, `${what} as a root key with *: ${JSON.stringify(answer.body)}`).toBe(200)
        expect(answer.body.meta, what).toEqual({ requestId: answer.headers['x-request-id'] })
      })

      it(`answers 200 to a root key with exactly ${row.needs.map(labelOf).join(' and ')}`, async () => {
        const { fixture, request, what } = await arrange()
        const permissions = row.needs.map((need) => permissionOf(alternatives(need)[0]!, fixture))
        const { key } = await createdRootKey(server, permissions)
        const answer = await send(server, request, bearer(key))
        expect(
          answer.status,
          `${what} as a root key with ${permissions.join(', ')}: ${JSON.stringify(answer.body)}`,
        ).toBe(200)
        if (row.lacking === NOT_FOUND_VERDICT) expect(answer.body.data, what).toMatchObject({ valid: true })
      })
    })
  })
}
