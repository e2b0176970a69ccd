import { Type } from 'typebox'
import type { FastifyRequest } from 'fastify'
import { badRequest, notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { NamespaceRecord, OverrideRecord } from '../../shared/ratelimit-namespace.js'
import type { ResourceAction } from '../../shared/root-key-actions.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { NamespaceRef } from '../ratelimit-namespaces.js'
import { namespaceOnFirstUse } from '../namespace-first-use.js'
import { deleteOverride, requireNamespace, setOverride } from '../override-operations.js'
import { principalOf, callerOf } from '../root-key-auth.js'
import { EmptyResponse } from '../schemas/key-schemas.js'
import {
  DeleteOverrideBody,
  ListOverridesQuery,
  ListOverridesResponse,
  OverrideQuery,
  OverrideResponse,
  SetOverrideBody,
} from '../schemas/ratelimit-schemas.js'

const shown = (override: OverrideRecord) => ({
  id: override.id,
  identifier: override.identifier,
  limit: override.limit,
  duration: override.duration,
  async: override.async,
})

/** ratelimits.setOverride, getOverride, listOverrides, deleteOverride. */
export function registerOverrideRoutes(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post(
    '/v1/ratelimits.setOverride',
    {
      schema: {
        body: SetOverrideBody,
        response: { 200: Type.Object({ overrideId: Type.String({ description: 'The override’s id' }) }) },
      },
    },
    async (request) => {
      const { identifier, limit, duration } = request.body
      const namespace = await namespaceFor(request, deps, request.body, 'set_override')
      const async = request.body.async ?? false
      return {
        overrideId: (await setOverride(deps, callerOf(request), namespace, identifier, { limit, duration, async })).id,
      }
    },
  )

  app.get(
    '/v1/ratelimits.getOverride',
    { schema: { querystring: OverrideQuery, response: { 200: OverrideResponse } } },
    async (request) => {
      const namespace = await namespaceFor(request, deps, request.query, 'read_override')
      const override = await deps.overrides.get(namespace, request.query.identifier)
      if (!override) throw notFound('override', 'Override not found')
      return shown(override)
    },
  )

  app.get(
    '/v1/ratelimits.listOverrides',
    { schema: { querystring: ListOverridesQuery, response: { 200: ListOverridesResponse } } },
    async (request) => {
      const namespace = await namespaceFor(request, deps, request.query, 'read_override')
      const page = await deps.overrides.list(namespace, {
        cursor: request.query.cursor,
        limit: request.query.limit ?? 100,
      })
      return { overrides: page.overrides.map(shown), total: page.total, cursor: page.cursor }
    },
  )

  app.post(
    '/v1/ratelimits.deleteOverride',
    { schema: { body: DeleteOverrideBody, response: { 200: EmptyResponse } } },
    async (request) => {
      const { identifier } = request.body
      const namespace = await namespaceFor(request, deps, request.body, 'delete_override')
      const override = await deleteOverride(deps, callerOf(request), namespace, identifier)
      if (!override) throw notFound('override', `Override with ${identifier} identifier not found`)
      return {}
    },
  )
}

/**
 * The namespace an override call names, once the root key may do `action` on it. One that does not exist is a 404
 * (a 403 for a root key that may not do the action on every namespace: it learns nothing of which exist), except
 * that setOverride naming one by name makes it, as ratelimits.limit does.
 */
async function namespaceFor(
  request: FastifyRequest,
  deps: ControlPlaneDeps,
  ref: NamespaceRef,
  action: ResourceAction<'ratelimit'>,
): Promise<NamespaceRecord> {
  if (!ref.namespaceId && !ref.namespaceName) throw badRequest('You must provide a namespaceId or a namespaceName')
  const found = await deps.namespaces.find(ref)
  if (!found && action === 'set_override' && !ref.namespaceId)
    return namespaceOnFirstUse(callerOf(request), deps, ref.namespaceName!, action)
  return requireNamespace(
    principalOf(request),
    found,
    action,
    `Namespace ${ref.namespaceId || ref.namespaceName} not found`,
  )
}
