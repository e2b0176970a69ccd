import type { ErrorCode } from '../errors/errors.js'

/**
 * The document's tags, in the order Swagger UI shows them, with what each groups. v2's operations have tags of
 * their own (Unkey's v2 services), so that a group never mixes the two wire formats.
 */
export const TAGS = {
  apis: 'Apis: namespaces that keys belong to',
  keys: 'Keys: create, change, verify',
  permissions: 'Permissions and roles: what keys are granted',
  identities: 'Identities: the users or organisations behind keys, and their shared limits',
  ratelimits: 'Rate limits of anything, by namespace and identifier, with overrides',
  migrations: 'Importing existing keys (from Unkey or any SHA-256 store)',
  analytics: 'Verification counts across keys',
  audit: 'The audit log of management writes',
  rootKeys: 'Root keys: the keys that call the management API',
  webhooks: 'Webhooks: endpoints that receive signed events when keys, identities and root keys change',
  gateway: 'Forward-auth for gateways (verifier and `keygate dev`)',
  'secret scanning': "Leak reports from GitHub's secret scanning, which disable leaked keys",
  health: 'Whether the service is up, ready, and its metrics',
  'v2 apis': "Unkey's v2 wire format: apis, the namespaces that keys belong to",
  'v2 keys': "Unkey's v2 wire format: keys (create, change, verify, import) and what they are granted",
  'v2 identities': "Unkey's v2 wire format: identities and their shared limits",
  'v2 permissions': "Unkey's v2 wire format: permissions and roles",
  'v2 ratelimit': "Unkey's v2 wire format: rate limits of anything, and overrides",
  'v2 analytics': "Unkey's v2 wire format: ClickHouse SQL over every verification and rate-limit decision",
  'v2 health': "Unkey's v2 wire format: whether the service is up",
  'v2 portal': "Unkey's v2 wire format: the customer portal, where your customers manage their own keys",
} as const

export type Tag = keyof typeof TAGS

/** A header of a request or an answer, as the reference describes it. */
export interface HeaderDoc {
  description: string
  example?: string
}

/** An answer of a route that has no response schema of its own (metrics, forward-auth): status, body, headers. */
export interface ResponseDoc {
  description: string
  /** The body's content type and schema; no body when absent. */
  content?: { type: string; schema: object }
  headers?: Record<string, HeaderDoc>
}

/**
 * What the OpenAPI document says of each operation beyond its schemas: a summary, and whether it takes a
 * root key. The schemas themselves come from the routes (the single source of truth); this only names them for
 * people, and describes the answers of the few routes that send no JSON. Each call's doc sits beside its schemas
 * (a management adapter's `doc`; what the verifier serves too, in its contract under shared/<domain>/), and
 * control-plane/openapi/operations.ts gathers them: test/integration/openapi.test.ts fails if a route has no entry,
 * or an entry no route.
 */
export interface OperationDoc {
  summary: string
  /** Longer text under the summary (Markdown). */
  description?: string
  /** Management calls (and every v2 call but liveness) need `Authorization: Bearer <root key>`. */
  rootKey: boolean
  tag: Tag
  /** Where it is served, when not at `/v1/<operation id>` or, for a `v2.` id, `/v2/<operation>` (probes, metrics). */
  path?: string
  /** The errors it answers with, when not the usual ones (those of its kind of operation). */
  errors?: ErrorCode[]
  /** The methods to document, when the route takes more than OpenAPI can list (forward-auth takes any). */
  methods?: string[]
  /** Request headers it reads, for a route without a schema. */
  headers?: Record<string, HeaderDoc>
  /** Its answers, for a route without a response schema. */
  responses?: Record<number, ResponseDoc>
}
