import type { OperationDoc } from './operation-doc.js'
import { MANAGEMENT_ROUTES } from '../operations/management-routes.js'
import { V2_OPERATIONS } from './v2-operations.js'

export type { OperationDoc } from './operation-doc.js'

const KEYGATE_CODE = {
  description:
    'The verdict: VALID, NOT_FOUND, DISABLED, FORBIDDEN, EXPIRED, INSUFFICIENT_PERMISSIONS, RATE_LIMITED, USAGE_EXCEEDED, or MISSING_KEY (no key sent)',
}

/** Unkey's v1 wire format and Keygate's own routes (probes, metrics, forward-auth). */
const V1_OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'apis.createApi': { summary: 'Create an api (a namespace for keys)', rootKey: true, tag: 'apis' },
  'apis.getApi': { summary: 'Read an api', rootKey: true, tag: 'apis' },
  'apis.deleteApi': { summary: 'Delete an api and stop its keys from verifying', rootKey: true, tag: 'apis' },
  'apis.listApis': {
    summary: 'List every api, a page at a time',
    description:
      "Keygate's own (Unkey v1 has no way to list apis): every api, oldest first, for a root key with `api.*.read_api`.",
    rootKey: true,
    tag: 'apis',
  },
  'apis.listKeys': { summary: "List an api's keys, a page at a time", rootKey: true, tag: 'apis' },
  'apis.deleteKeys': { summary: "Delete all of an api's keys", rootKey: true, tag: 'apis' },
  'keys.addPermissions': { summary: 'Add permissions to a key', rootKey: true, tag: 'keys' },
  'keys.setPermissions': { summary: "Replace a key's permissions", rootKey: true, tag: 'keys' },
  'keys.removePermissions': { summary: 'Remove permissions from a key', rootKey: true, tag: 'keys' },
  'keys.addRoles': { summary: 'Add roles to a key', rootKey: true, tag: 'keys' },
  'keys.setRoles': { summary: "Replace a key's roles", rootKey: true, tag: 'keys' },
  'keys.removeRoles': { summary: 'Remove roles from a key', rootKey: true, tag: 'keys' },
  'permissions.createPermission': {
    summary: 'Create a permission (keys are granted it by slug)',
    rootKey: true,
    tag: 'permissions',
  },
  'permissions.getPermission': { summary: 'Read a permission', rootKey: true, tag: 'permissions' },
  'permissions.listPermissions': { summary: 'List every permission', rootKey: true, tag: 'permissions' },
  'permissions.deletePermission': {
    summary: 'Delete a permission: no key or role grants it any more',
    rootKey: true,
    tag: 'permissions',
  },
  'permissions.createRole': { summary: 'Create a role', rootKey: true, tag: 'permissions' },
  'permissions.getRole': { summary: 'Read a role and the permissions it grants', rootKey: true, tag: 'permissions' },
  'permissions.listRoles': { summary: 'List every role', rootKey: true, tag: 'permissions' },
  'permissions.deleteRole': {
    summary: 'Delete a role: its keys lose what it granted',
    rootKey: true,
    tag: 'permissions',
  },
  'permissions.setRolePermissions': {
    summary: 'Replace the permissions a role grants (every key holding it follows)',
    description:
      "Unkey's v1 has no call for this (its dashboard did it); the name is v2's. Every verifier applies the change within the revocation bound.",
    rootKey: true,
    tag: 'permissions',
  },
  'migrations.createKeys': {
    summary: 'Import up to 100 existing keys, by plaintext or SHA-256 hash, without reissuing them',
    description:
      'Each key takes the fields of keys.createKey and its `plaintext` or `hash`. All or nothing: a duplicate (twice in the request, or already stored) is a 409 naming every one, and nothing is written.',
    rootKey: true,
    tag: 'migrations',
    errors: [
      'BAD_REQUEST',
      'UNAUTHORIZED',
      'INSUFFICIENT_PERMISSIONS',
      'NOT_FOUND',
      'CONFLICT',
      'RATE_LIMITED',
      'INTERNAL_SERVER_ERROR',
      'UNAVAILABLE',
    ],
  },
  'analytics.getVerifications': {
    summary: "Verification counts across an api's keys: summed, or per hour, day, month, key or externalId",
    description:
      'From the counts verifiers keep per key and hour/day (90 days): VALID, RATE_LIMITED and USAGE_EXCEEDED. Sums over at most 1000 keys of the api or the externalId (more: 412, name the keys with keyId) and 100000 bucket reads. Needs read_analytics or read_api on the api.',
    rootKey: true,
    tag: 'analytics',
    errors: [
      'BAD_REQUEST',
      'UNAUTHORIZED',
      'INSUFFICIENT_PERMISSIONS',
      'NOT_FOUND',
      'PRECONDITION_FAILED',
      'RATE_LIMITED',
      'INTERNAL_SERVER_ERROR',
      'UNAVAILABLE',
    ],
  },
  'ratelimits.limit': {
    summary: 'Count a call of an identifier in a namespace: may it go on? (the standalone rate-limit service)',
    description:
      "Also served by the verifier sidecar, without a root key (it is reachable only beside your API): call it there to rate-limit anything next to your API. Here it needs `ratelimit.<namespaceId|*>.limit`; a namespace named for the first time is made when the root key also has `ratelimit.*.create_namespace`. Exact across every process unless `async` (or the identifier's override) says otherwise.",
    rootKey: true,
    tag: 'ratelimits',
  },
  'ratelimits.setOverride': {
    summary: "Set an identifier's (or a `*` pattern's) limit in a namespace, in place of the one calls send",
    description: 'Every verifier applies it within the revocation bound. A namespace named for the first time is made.',
    rootKey: true,
    tag: 'ratelimits',
  },
  'ratelimits.getOverride': { summary: "Read an identifier's override", rootKey: true, tag: 'ratelimits' },
  'ratelimits.listOverrides': {
    summary: "List a namespace's overrides, a page at a time",
    rootKey: true,
    tag: 'ratelimits',
  },
  'ratelimits.listNamespaces': {
    summary: 'List every rate-limit namespace, a page at a time',
    description:
      "Keygate's own (Unkey v1 has no way to list namespaces): every namespace, oldest first, for a root key with `ratelimit.*.read_namespace`. A namespace is made by its first use (ratelimits.limit, ratelimits.setOverride).",
    rootKey: true,
    tag: 'ratelimits',
  },
  'ratelimits.deleteOverride': {
    summary: "Delete an identifier's override: calls get the limit they send again",
    rootKey: true,
    tag: 'ratelimits',
  },
  'identities.createIdentity': {
    summary: 'Create an identity (a user or organisation): keys with its externalId share its meta and limits',
    rootKey: true,
    tag: 'identities',
  },
  'identities.getIdentity': { summary: 'Read an identity by id or externalId', rootKey: true, tag: 'identities' },
  'identities.listIdentities': { summary: 'List identities, a page at a time', rootKey: true, tag: 'identities' },
  'identities.updateIdentity': {
    summary: "Replace an identity's meta or rate limits (every key of it follows)",
    rootKey: true,
    tag: 'identities',
  },
  'identities.deleteIdentity': {
    summary: 'Delete an identity: its keys keep their externalId and lose its meta and limits',
    rootKey: true,
    tag: 'identities',
  },
  'audit.list': {
    summary: 'Read the audit log of management writes, newest first, filtered by action, root key, api or key',
    rootKey: true,
    tag: 'audit',
  },
  'rootKeys.createRootKey': {
    summary: 'Create a root key with at most the permissions of the caller (shown once; only its hash is stored)',
    rootKey: true,
    tag: 'rootKeys',
  },
  'rootKeys.listRootKeys': {
    summary: 'List the stored root keys (never a key or a hash)',
    rootKey: true,
    tag: 'rootKeys',
  },
  'rootKeys.revokeRootKey': {
    summary: 'Revoke a root key: refused from the next call on',
    rootKey: true,
    tag: 'rootKeys',
  },
  'rootKeys.rollRootKey': {
    summary: 'Replace a root key by a new one with the same name and permissions (shown once); the old one is revoked',
    rootKey: true,
    tag: 'rootKeys',
  },
  'keys.verifyKey': {
    summary: 'Verify a key (always 200 for a well-formed request: valid and code say the verdict)',
    description:
      "What your API calls, usually on the verifier sidecar; no root key. A key that does not verify is an answer, not an error: 200 with `valid: false` and the `code` that says why. A RATE_LIMITED answer names the limit that refused the call in the `Unkey-Ratelimit-Triggered` header, as Unkey v1 did (`default`: the key's own).",
    rootKey: false,
    tag: 'keys',
  },
  authorize: {
    summary: 'Forward-auth: verify the key of a request a gateway holds (status and headers only)',
    description:
      "For nginx `auth_request`, Envoy `ext_authz` and Traefik `forwardAuth`: any method, any body (never read), also at `/v1/authorize/<path>`. Served by the verifier and by `keygate dev`. The policy (api, permissions, cost) comes from the verifier's flags or the `X-Keygate-*` headers, which the gateway must set or clear.",
    rootKey: false,
    tag: 'gateway',
    methods: ['GET'],
    errors: ['UNAVAILABLE'],
    headers: {
      'x-api-key': { description: 'The key (the header is `KEY_HEADER`; `Authorization: Bearer <key>` works too)' },
      'x-keygate-api-id': { description: 'Only keys of this api (overrides --api-id; the gateway sets it)' },
      'x-keygate-permissions': {
        description: 'Comma-separated permissions the key must all have (overrides --require-permissions)',
      },
      'x-keygate-cost': { description: 'Credits the request costs, for keys with credits (overrides --cost)' },
    },
    responses: {
      200: {
        description: 'VALID: let the request through',
        headers: {
          'x-keygate-code': KEYGATE_CODE,
          'x-keygate-key-id': { description: "The key's id" },
          'x-keygate-owner-id': { description: "The key's externalId, percent-encoded beyond printable ASCII" },
          'x-keygate-remaining': { description: 'Credits left (keys with credits)' },
        },
      },
      401: {
        description: 'No key, or NOT_FOUND, DISABLED, EXPIRED (with `WWW-Authenticate: Bearer`)',
        headers: { 'x-keygate-code': KEYGATE_CODE },
      },
      403: {
        description: 'FORBIDDEN (another api) or INSUFFICIENT_PERMISSIONS',
        headers: { 'x-keygate-code': KEYGATE_CODE },
      },
      429: {
        description: 'RATE_LIMITED or USAGE_EXCEEDED',
        headers: {
          'x-keygate-code': KEYGATE_CODE,
          'retry-after': { description: 'Seconds until the window resets' },
          'ratelimit-limit': { description: 'Units per window' },
          'ratelimit-remaining': { description: 'Units left' },
          'ratelimit-reset': { description: 'Seconds until the window resets' },
        },
      },
    },
  },
  liveness: {
    summary: 'Whether the service is up, and which store it runs on',
    rootKey: false,
    tag: 'health',
    errors: [],
  },
  index: {
    path: '/',
    summary: 'Which Keygate process this is, and where its console, reference and operations are',
    description:
      'JSON naming the console, this reference, the API and the probes. A browser asking for a page (`Accept: text/html`) is redirected to the console instead.',
    rootKey: false,
    tag: 'health',
    errors: [],
  },
  livez: {
    path: '/livez',
    summary: 'Liveness probe: the process is up',
    rootKey: false,
    tag: 'health',
    errors: [],
  },
  readyz: {
    path: '/readyz',
    summary: 'Readiness probe: 200 only when the server can answer correctly',
    description:
      'Redis reachable, the verifier synced and confirmed current within `MAX_STALENESS_MS`, not shutting down; otherwise 503 with the reasons in `message`.',
    rootKey: false,
    tag: 'health',
    errors: ['UNAVAILABLE'],
  },
  metrics: {
    path: '/metrics',
    summary: 'Prometheus metrics',
    rootKey: false,
    tag: 'health',
    errors: [],
    responses: {
      200: {
        description: 'The Prometheus text format: `keygate_*` counters, gauges and histograms',
        content: { type: 'text/plain; version=0.0.4; charset=utf-8', schema: { type: 'string' } },
      },
    },
  },
}

/** What each management route's adapter says of itself (control-plane/operations/): all take a root key. */
const MANAGEMENT_OPERATIONS: Readonly<Record<string, OperationDoc>> = Object.fromEntries(
  MANAGEMENT_ROUTES.map((route) => [route.id, { ...route.doc, rootKey: true }]),
)

/**
 * Every operation the document describes, both wire formats: v2's ids start with `v2.` (`v2.keys.createKey`), so an
 * operation id names one route of one version.
 */
export const OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  ...V1_OPERATIONS,
  ...V2_OPERATIONS,
  ...MANAGEMENT_OPERATIONS,
}

const V2_PREFIX = 'v2.'

/** Whether an operation is one of Unkey's v2 wire format (its errors are problem bodies, its auth statuses v2's). */
export const isV2Operation = (id: string): boolean => id.startsWith(V2_PREFIX)

/**
 * Where an operation is served: `keys.createKey` → `/v1/keys.createKey`, `v2.keys.createKey` →
 * `/v2/keys.createKey`, `livez` → `/livez`.
 */
export const operationPath = (id: string): string =>
  OPERATIONS[id]?.path ?? (isV2Operation(id) ? `/v2/${id.slice(V2_PREFIX.length)}` : `/v1/${id}`)

const ID_BY_PATH = new Map(Object.keys(OPERATIONS).map((id) => [operationPath(id), id]))

/** The operation served at a route's URL, or undefined for a route the table does not document. */
export const operationIdOf = (url: string): string | undefined => ID_BY_PATH.get(url)
