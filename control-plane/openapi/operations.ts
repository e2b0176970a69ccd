import type { OperationDoc } from '../../shared/http/operation-doc.js'
import { AUTHORIZE_DOC } from '../../shared/verification/authorize-contract.js'
import { VERIFY_KEY_DOC } from '../../shared/verification/verify-key-contract.js'
import { LIVENESS_ROUTES } from '../http/liveness.js'
import { MANAGEMENT_ROUTES } from '../management-routes.js'
import { PORTAL_SESSION_ROUTES } from '../portal/session/session-routes.v2.js'
import { portalRoutes } from '../portal/wire/portal-session-route.js'
import { V2_OPERATIONS } from './v2-operations.js'

/**
 * Unkey's v1 wire format and Keygate's own routes (probes, metrics, forward-auth). What the verifier serves too keeps
 * its doc in its contract, beside its schemas (shared/verification/).
 */
const V1_OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'keys.verifyKey': VERIFY_KEY_DOC,
  authorize: AUTHORIZE_DOC,
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
  liveness: LIVENESS_ROUTES[0].doc,
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

/** What each management route's adapter says of itself (control-plane/<domain>/): all take a root key. */
const MANAGEMENT_OPERATIONS: Readonly<Record<string, OperationDoc>> = Object.fromEntries(
  MANAGEMENT_ROUTES.map((route) => [route.id, route.doc]),
)

/** The routes the customer portal's browser calls: a session cookie (exchangeCode: nothing), never a root key. */
const PORTAL_SESSION_OPERATIONS: Readonly<Record<string, OperationDoc>> = Object.fromEntries(
  portalRoutes(PORTAL_SESSION_ROUTES).map((route) => [route.id, route.doc]),
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
