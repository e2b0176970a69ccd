import type { Static, TSchema } from 'typebox'
import {
  V2_LIMIT_DOC,
  V2_MULTI_LIMIT_DOC,
  V2LimitBody,
  V2LimitData,
  V2MultiLimitBody,
  V2MultiLimitData,
} from './limit-contract.v2.js'
import type { NamespaceLimitOutcome, NamespaceLimitRequest, NamespaceLimits } from './namespace-limits.js'
import type { NamespaceRecord } from './ratelimit-namespace.js'
import { requireNamespaceAction, type Principal } from '../root-keys/root-key-principal.js'
import type { OperationDoc } from '../http/operation-doc.js'
import type { Route, RouteRequest } from '../http/route.js'
import { V2Envelope } from '../http/v2-route.js'

/** What the v2 limit routes need of the process serving them. */
export interface V2RatelimitAccess<Caller extends RootKeyCaller> {
  /**
   * The caller's root key from the `Authorization` header (every v2 call needs one): run before the body is read, so
   * a refusal comes first.
   */
  authenticate(request: RouteRequest): Caller | Promise<Caller>
  /**
   * Makes a namespace named for the first time (the root key may: checked before). Absent on a verifier, which
   * writes nothing: there a namespace it has no record of is counted all the same, without overrides.
   */
  create?(caller: Caller, name: string): Promise<NamespaceRecord>
}

/** A caller that holds a root key's principal (the management API's caller, or the verifier's). */
export interface RootKeyCaller {
  principal: Principal
}

/**
 * v2's ratelimit.limit and ratelimit.multiLimit, on any process that has the rate-limit core: the control plane
 * (namespaces made on first use) and the verifier. Their contract (bodies, answers, the reference's text) is
 * shared/ratelimits/limit-contract.v2.ts. Permissions are Unkey's: ratelimit.<namespaceId|*>.limit, and
 * ratelimit.*.create_namespace for a namespace not made yet (plus ratelimit.*.limit: it has no id a narrower
 * permission could name).
 */
export function v2RatelimitLimitRoutes<Caller extends RootKeyCaller>(
  ratelimits: NamespaceLimits,
  access: V2RatelimitAccess<Caller>,
): Route<void, Caller>[] {
  /** `POST /v2/<operation>`, authenticated by `access`, its answer the envelope's `data`. */
  const v2Call = <Body extends TSchema, Data extends TSchema>(
    operation: string,
    doc: OperationDoc,
    schemas: { body: Body; data: Data },
    answer: (input: Static<Body>, caller: Caller) => Promise<Static<Data>>,
  ): Route<void, Caller> => ({
    id: `v2.${operation}`,
    method: 'POST',
    url: `/v2/${operation}`,
    doc,
    input: schemas.body,
    response: V2Envelope(schemas.data),
    authenticate: (request) => access.authenticate(request),
    handle: async (input: Static<Body>, caller: Caller) => ({ data: await answer(input, caller) }),
  })
  const limitRoute = v2Call(
    'ratelimit.limit',
    V2_LIMIT_DOC,
    { body: V2LimitBody, data: V2LimitData },
    async (check, caller) => {
      const namespaces = await namespacesOf(caller, [check.namespace], ratelimits, access)
      const outcome = await ratelimits.limit(requestOf(check, namespaces))
      return { ...windowOf(outcome), success: outcome.ok }
    },
  )
  const multiLimitRoute = v2Call(
    'ratelimit.multiLimit',
    V2_MULTI_LIMIT_DOC,
    { body: V2MultiLimitBody, data: V2MultiLimitData },
    async (checks, caller) => {
      const named = checks.map((check) => check.namespace)
      const namespaces = await namespacesOf(caller, named, ratelimits, access)
      const outcomes = await ratelimits.limitAll(checks.map((check) => requestOf(check, namespaces)))
      return {
        passed: outcomes.every((outcome) => outcome.ok),
        limits: outcomes.map((outcome, i) => ({
          namespace: checks[i]!.namespace,
          identifier: checks[i]!.identifier,
          ...windowOf(outcome),
          passed: outcome.ok,
        })),
      }
    },
  )
  return [limitRoute, multiLimitRoute]
}

/**
 * The namespaces a call names (by name or id), once the root key may limit each of them: every permission is
 * checked before any namespace is made, so a refused call makes none. One not made yet (and not made here, on a
 * verifier) is null.
 */
async function namespacesOf<Caller extends RootKeyCaller>(
  caller: Caller,
  named: readonly string[],
  ratelimits: NamespaceLimits,
  access: V2RatelimitAccess<Caller>,
): Promise<Map<string, NamespaceRecord | null>> {
  const { principal } = caller
  const unique = [...new Set(named)]
  const found = new Map(await Promise.all(unique.map(async (text) => [text, await ratelimits.find(text)] as const)))
  const missing = unique.filter((text) => !found.get(text))
  if (missing.length > 0) requireNamespaceAction(principal, undefined, 'limit', true)
  for (const namespace of found.values()) if (namespace) requireNamespaceAction(principal, namespace.id, 'limit')
  if (access.create) for (const name of missing) found.set(name, await access.create(caller, name))
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
