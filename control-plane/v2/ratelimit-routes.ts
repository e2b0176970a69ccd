import { Type } from 'typebox'
import { notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { RATELIMIT_RANGES } from '../../shared/http/ratelimit-limit-schema.js'
import { registerV2RatelimitLimits } from '../../shared/http/v2-ratelimit-limit.js'
import { registerV2, v2Pagination } from '../../shared/http/v2-route.js'
import type { NamespaceLimits } from '../../shared/namespace-limits.js'
import { isNamespaceId, wildcardMatches, type OverrideRecord } from '../../shared/ratelimit-namespace.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { createNamespace, namespaceOnFirstUse } from '../namespace-first-use.js'
import { deleteOverride, requireNamespace, setOverride } from '../override-operations.js'
import { may, principalOf, callerOf } from '../root-key-auth.js'

/** Unkey v2's ratelimit.* (V2Ratelimit* schemas): the limits (shared with the verifier) and the overrides. */

const Text = (description: string, examples: string[]) =>
  Type.String({ minLength: 1, maxLength: 512, description, examples })
const NamespaceField = Text('The namespace, by name or by id (`rlns_…`)', [WIRE_EXAMPLES.namespaceName])
const IdentifierField = Text(
  'The identifier the override is for, or a pattern where `*` stands for any characters (`user_*`), exactly as set',
  ['user_123'],
)
const OverrideRef = Type.Object(
  { namespace: NamespaceField, identifier: IdentifierField },
  { additionalProperties: false },
)

const RatelimitOverride = Type.Object({
  overrideId: Type.String({ description: 'The override’s id' }),
  identifier: Type.String({ description: 'The identifier or pattern it is for' }),
  limit: Type.Integer({ description: 'Units allowed per window' }),
  duration: Type.Integer({ description: 'The window, milliseconds' }),
})

const shown = (override: OverrideRecord) => ({
  overrideId: override.id,
  identifier: override.identifier,
  limit: override.limit,
  duration: override.duration,
})

const namespaceNotFound = (text: string) => `namespace ${text} not found`
const overrideNotFound = (identifier: string) => `override for ${identifier} not found`

/**
 * ratelimit.limit/multiLimit (a namespace named for the first time made, as v1 does) and the override routes:
 * ratelimit.<namespaceId|*>.set_override, read_override, delete_override. setOverride makes a namespace named
 * for the first time, as v1's does.
 */
export function registerV2RatelimitRoutes(app: KeygateServer, deps: ControlPlaneDeps, limits: NamespaceLimits): void {
  // The management hook has checked the root key.
  registerV2RatelimitLimits(app, limits, {
    create: (request, name) => createNamespace(callerOf(request), deps, name),
  })

  registerV2(
    app,
    'ratelimit.setOverride',
    {
      body: Type.Object(
        {
          namespace: NamespaceField,
          identifier: IdentifierField,
          limit: Type.Integer({
            minimum: 0,
            maximum: RATELIMIT_RANGES.limit,
            description: 'Units allowed per window, in place of the request’s (0 refuses every call)',
            examples: [100],
          }),
          duration: Type.Integer({
            minimum: 1_000,
            maximum: RATELIMIT_RANGES.durationMs,
            description: 'The window, milliseconds, in place of the request’s',
            examples: [60_000],
          }),
        },
        { additionalProperties: false },
      ),
      data: Type.Object({ overrideId: Type.String({ description: 'The override’s id (the same when one changed)' }) }),
    },
    async (request) => {
      const { namespace: named, identifier, limit, duration } = request.body
      const found = await deps.namespaces.byNameOrId(named)
      // A name met for the first time is made, as v1 does (with ratelimit.*.create_namespace, else 404): on Unkey
      // the limit calls before it would have made it, but a Keygate verifier counts a namespace without making one.
      const namespace =
        found || isNamespaceId(named)
          ? requireNamespace(principalOf(request), found, 'set_override', namespaceNotFound(named))
          : await namespaceOnFirstUse(callerOf(request), deps, named, 'set_override')
      return {
        data: {
          overrideId: (await setOverride(deps, callerOf(request), namespace, identifier, { limit, duration })).id,
        },
      }
    },
  )

  registerV2(app, 'ratelimit.getOverride', { body: OverrideRef, data: RatelimitOverride }, async (request) => {
    const { namespace: named, identifier } = request.body
    const found = await deps.namespaces.byNameOrId(named)
    // A root key that may not read the overrides gets the answer of a missing override, whatever exists (Unkey's
    // masking, extended to the namespace): it cannot tell which identifiers or namespaces have overrides.
    if (!may(principalOf(request), 'ratelimit', found?.id ?? '*', 'read_override'))
      throw notFound('override', overrideNotFound(identifier))
    if (!found) throw notFound('namespace', namespaceNotFound(named))
    // The identifier's own override, else the first-set pattern matching it (the one ratelimit.limit applies).
    const pattern = found.wildcards.find((rule) => wildcardMatches(rule.identifier, identifier))
    const override =
      (await deps.overrides.get(found, identifier)) ??
      (pattern ? await deps.overrides.get(found, pattern.identifier) : null)
    if (!override) throw notFound('override', overrideNotFound(identifier))
    return { data: shown(override) }
  })

  registerV2(
    app,
    'ratelimit.listOverrides',
    {
      body: Type.Object(
        {
          namespace: NamespaceField,
          cursor: Type.Optional(
            Type.String({ maxLength: 512, description: 'Where the next page starts: the previous page’s cursor' }),
          ),
          limit: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 100, description: 'Overrides per page (default 10)' }),
          ),
        },
        { additionalProperties: false },
      ),
      data: Type.Array(RatelimitOverride, { description: 'A page of the namespace’s overrides, oldest first' }),
      paged: true,
    },
    async (request) => {
      const { namespace: named, cursor, limit } = request.body
      const found = await deps.namespaces.byNameOrId(named)
      const namespace = requireNamespace(principalOf(request), found, 'read_override', namespaceNotFound(named))
      // The last page carries no cursor, full or not: the SDK asks for another page while one comes back.
      const page = await deps.overrides.page(namespace, { ...(cursor ? { cursor } : {}), limit: limit ?? 10 })
      return { data: page.records.map(shown), pagination: v2Pagination(page.cursor) }
    },
  )

  registerV2(
    app,
    'ratelimit.deleteOverride',
    { body: OverrideRef, data: Type.Object({}, { additionalProperties: false }) },
    async (request) => {
      const { namespace: named, identifier } = request.body
      const found = await deps.namespaces.byNameOrId(named)
      const namespace = requireNamespace(principalOf(request), found, 'delete_override', namespaceNotFound(named))
      if (!(await deleteOverride(deps, callerOf(request), namespace, identifier)))
        throw notFound('override', overrideNotFound(identifier))
      return { data: {} }
    },
  )
}
