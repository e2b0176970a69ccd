import type { FastifyRequest } from 'fastify'
import { Type, type Static } from 'typebox'
import type { NamespaceLimitOutcome, NamespaceLimitRequest, NamespaceLimits } from '../namespace-limits.js'
import type { NamespaceRecord } from '../ratelimit-namespace.js'
import { requireNamespaceAction } from '../root-key-principal.js'
import { WIRE_EXAMPLES } from '../wire-examples.js'
import type { KeygateServer } from './build-server.js'
import { authenticateBeforeBody, type Authenticate } from './request-principal.js'
import { RATELIMIT_RANGES } from './ratelimit-limit-schema.js'
import { registerV2 } from './v2-route.js'

/** Unkey v2's bounds: names and identifiers of 1 to 512 characters, windows of 1 second to 30 days. */
const V2_TEXT = { minLength: 1, maxLength: 512 } as const
const V2_MAX_DURATION_MS = 30 * 86_400_000

/** V2RatelimitLimitRequestBody: no `async` (v2 counts every call exactly, unless an override says async). */
export const V2LimitBody = Type.Object(
  {
    namespace: Type.String({
      ...V2_TEXT,
      description:
        'The namespace, by name or by id (`rlns_…`). A name not seen before makes the namespace (the root key needs ratelimit.*.create_namespace)',
      examples: [WIRE_EXAMPLES.namespaceName],
    }),
    identifier: Type.String({
      ...V2_TEXT,
      description: 'Who or what is limited: a user id, an email, an ip… Each has its own window',
      examples: ['user_123'],
    }),
    limit: Type.Integer({
      minimum: 1,
      maximum: RATELIMIT_RANGES.limit,
      description: 'Units allowed per window (an override of the identifier wins)',
      examples: [10],
    }),
    duration: Type.Integer({
      minimum: 1_000,
      maximum: V2_MAX_DURATION_MS,
      description: 'The window, milliseconds (fixed windows aligned to the epoch; an override of the identifier wins)',
      examples: [60_000],
    }),
    cost: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: RATELIMIT_RANGES.cost,
        description: 'Units this call uses (default 1); 0 reads the window without using any',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ namespace: WIRE_EXAMPLES.namespaceName, identifier: 'user_123', limit: 10, duration: 60_000 }],
  },
)

const Window = {
  limit: Type.Integer({ description: 'Units allowed per window: the override’s when one applies' }),
  remaining: Type.Integer({ description: 'Units left in this window after the call' }),
  reset: Type.Integer({ description: 'When the window ends, unix milliseconds' }),
  overrideId: Type.Optional(Type.String({ description: 'The override that set the limit, when one did' })),
}

export const V2LimitData = Type.Object({
  ...Window,
  success: Type.Boolean({ description: 'Whether the call may go on: false when the window has no room for its cost' }),
})

export const V2MultiLimitBody = Type.Array(V2LimitBody, {
  minItems: 1,
  maxItems: 100,
  description: 'The limits to check together: every window is charged only if each has room',
})

export const V2MultiLimitData = Type.Object({
  passed: Type.Boolean({ description: 'Whether every limit had room (then, and only then, each was charged)' }),
  limits: Type.Array(
    Type.Object({
      namespace: Type.String({ description: 'The namespace as the request named it' }),
      identifier: Type.String({ description: 'The identifier limited' }),
      ...Window,
      passed: Type.Boolean({ description: 'Whether this window had room for its cost' }),
    }),
    { description: 'One per limit, in the order asked' },
  ),
})

/** What the v2 limit routes need of the process serving them. */
export interface V2RatelimitAccess {
  /**
   * The caller's root key from the `Authorization` header (every v2 call needs one): run before the body is read, so
   * a refusal comes first. Absent where the server's own hook has set `request.principal` already (the control
   * plane's management routes).
   */
  authenticate?: Authenticate
  /**
   * Makes a namespace named for the first time (the root key may: checked before). Absent on a verifier, which
   * writes nothing: there a namespace it has no record of is counted all the same, without overrides.
   */
  create?(request: FastifyRequest, name: string): Promise<NamespaceRecord>
}

/**
 * v2's ratelimit.limit and ratelimit.multiLimit, on any process that has the rate-limit core: the control plane
 * (authenticated by its management hook, namespaces made on first use) and the verifier (by its own root-key check).
 * Permissions are Unkey's: ratelimit.<namespaceId|*>.limit, and ratelimit.*.create_namespace for a namespace not
 * made yet (plus ratelimit.*.limit: it has no id a narrower permission could name).
 */
export function registerV2RatelimitLimits(
  app: KeygateServer,
  ratelimits: NamespaceLimits,
  access: V2RatelimitAccess,
): void {
  void app.register(async (scope: KeygateServer) => {
    if (access.authenticate) authenticateBeforeBody(scope, access.authenticate)
    registerV2(scope, 'ratelimit.limit', { body: V2LimitBody, data: V2LimitData }, async (request) => {
      const namespaces = await namespacesOf(request, [request.body.namespace], ratelimits, access)
      const outcome = await ratelimits.limit(requestOf(request.body, namespaces))
      return { data: { ...windowOf(outcome), success: outcome.ok } }
    })
    registerV2(scope, 'ratelimit.multiLimit', { body: V2MultiLimitBody, data: V2MultiLimitData }, async (request) => {
      const checks = request.body
      const namespaces = await namespacesOf(
        request,
        checks.map((check) => check.namespace),
        ratelimits,
        access,
      )
      const outcomes = await ratelimits.limitAll(checks.map((check) => requestOf(check, namespaces)))
      return {
        data: {
          passed: outcomes.every((outcome) => outcome.ok),
          limits: outcomes.map((outcome, i) => ({
            namespace: checks[i]!.namespace,
            identifier: checks[i]!.identifier,
            ...windowOf(outcome),
            passed: outcome.ok,
          })),
        },
      }
    })
  })
}

/**
 * The namespaces a call names (by name or id), once the root key may limit each of them: every permission is
 * checked before any namespace is made, so a refused call makes none. One not made yet (and not made here, on a
 * verifier) is null.
 */
async function namespacesOf(
  request: FastifyRequest,
  named: readonly string[],
  ratelimits: NamespaceLimits,
  access: V2RatelimitAccess,
): Promise<Map<string, NamespaceRecord | null>> {
  const principal = request.principal
  if (principal === null) throw new Error('v2 ratelimit routes need the root key checked before them')
  const unique = [...new Set(named)]
  const found = new Map(await Promise.all(unique.map(async (text) => [text, await ratelimits.find(text)] as const)))
  const missing = unique.filter((text) => !found.get(text))
  if (missing.length > 0) requireNamespaceAction(principal, undefined, 'limit', true)
  for (const namespace of found.values()) if (namespace) requireNamespaceAction(principal, namespace.id, 'limit')
  if (access.create) for (const name of missing) found.set(name, await access.create(request, name))
  return found
}

/** The call, Unkey's defaults applied: cost 1, exact; counted under the namespace's name (the id names it too). */
function requestOf(
  check: Static<typeof V2LimitBody>,
  namespaces: Map<string, NamespaceRecord | null>,
): NamespaceLimitRequest {
  return {
    namespace: namespaces.get(check.namespace)?.name ?? check.namespace,
    identifier: check.identifier,
    limit: check.limit,
    duration: check.duration,
    cost: check.cost ?? 1,
    async: false,
  }
}

const windowOf = (outcome: NamespaceLimitOutcome) => ({
  limit: outcome.limit,
  remaining: outcome.remaining,
  reset: outcome.reset,
  ...(outcome.overrideId === undefined ? {} : { overrideId: outcome.overrideId }),
})
