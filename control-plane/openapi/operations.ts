import type { OperationDoc } from './operation-doc.js'
import { MANAGEMENT_ROUTES } from '../operations/management-routes.js'
import { PORTAL_SESSION_ROUTES } from '../operations/portal/session-routes.js'
import { V2_OPERATIONS } from './v2-operations.js'

export type { OperationDoc } from './operation-doc.js'

const KEYGATE_CODE = {
  description:
    'The verdict: VALID, NOT_FOUND, DISABLED, FORBIDDEN, EXPIRED, INSUFFICIENT_PERMISSIONS, RATE_LIMITED, USAGE_EXCEEDED, or MISSING_KEY (no key sent)',
}

/** Unkey's v1 wire format and Keygate's own routes (probes, metrics, forward-auth). */
const V1_OPERATIONS: Readonly<Record<string, OperationDoc>> = {
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
        description:
          "FORBIDDEN (another api, or the request's address outside the key's or its api's IP allow-list) or INSUFFICIENT_PERMISSIONS",
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
  'secretScanning.github': {
    path: '/v1/secret-scanning/github',
    summary: "GitHub's secret-scanning partner endpoint: act on keys found in public places",
    description:
      "GitHub sends the keys it finds in public repositories and packages here, signed with a key it publishes (`SECRET_SCANNING_KEYS_URL`): no root key, the signature is the authentication. A report that is unsigned, signed by no published key, not signed over this body, or received before is refused and changes nothing. Each token is answered `true_positive` (a key of ours, acted on as its api's leak policy says) or `false_positive`. See docs/leaked-keys.md.",
    rootKey: false,
    tag: 'secret scanning',
    errors: ['BAD_REQUEST', 'UNAUTHORIZED', 'CONFLICT', 'UNAVAILABLE'],
    headers: {
      'github-public-key-identifier': { description: 'Which published key signed the report' },
      'github-public-key-signature': { description: 'Base64 of the ECDSA P-256 SHA-256 signature of the raw body' },
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

/** The routes the customer portal's browser calls: a session cookie (exchangeCode: nothing), never a root key. */
const PORTAL_SESSION_OPERATIONS: Readonly<Record<string, OperationDoc>> = Object.fromEntries(
  PORTAL_SESSION_ROUTES.map((route) => [`v2.${route.operation}`, { ...route.doc, rootKey: false }]),
)

/**
 * Every operation the document describes, both wire formats: v2's ids start with `v2.` (`v2.keys.createKey`), so an
 * operation id names one route of one version.
 */
export const OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  ...V1_OPERATIONS,
  ...V2_OPERATIONS,
  ...MANAGEMENT_OPERATIONS,
  ...PORTAL_SESSION_OPERATIONS,
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
