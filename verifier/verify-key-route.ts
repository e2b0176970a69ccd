import type { Route, RouteRequest } from '../shared/http/route.js'
import { invalid } from '../shared/errors/errors.js'
import { queryProblem, type PermissionQuery } from '../shared/verification/permission-query.js'
import {
  VERIFY_KEY_DOC,
  VerifyKeyBody,
  VerifyKeyResponse,
  type VerifyKeyBodyInput,
} from '../shared/verification/verify-key-contract.js'
import type { KeyVerifier } from './key-verifier.js'
import type { AddressedRequest } from '../shared/addresses/client-address.js'
import type { Verdict, VerifyRequest } from '../shared/verification/verification.js'

/**
 * POST /v1/keys.verifyKey: no root key. Always 200 for a well-formed request, valid or not; a failed verification is
 * data, not an error. Its contract (body, answer, the reference's text) is shared/verification/verify-key-contract.ts.
 * One route (shared/http/route.ts), served ahead of Fastify on a listening verifier (shared/http/fast-route.ts) and
 * as a Fastify route everywhere (inject, the control plane). Its latency is
 * keygate_http_request_duration_seconds{route="/v1/keys.verifyKey"}: one histogram per request.
 */
export function verifyKeyRoute(verifier: KeyVerifier): Route {
  return {
    id: 'keys.verifyKey',
    method: 'POST',
    url: '/v1/keys.verifyKey',
    doc: VERIFY_KEY_DOC,
    input: VerifyKeyBody,
    response: VerifyKeyResponse,
    handle: (body: VerifyKeyBodyInput, _caller, _deps, request: RouteRequest) =>
      answerVerifyKey(verifier, body, request.raw),
    headersOf: (answer: Verdict) => headersOf(answer),
  }
}

/**
 * Unkey's Unkey-Ratelimit-Triggered: the name of the limit that refused the call (its tests read it; a name no
 * header can carry is left out). Only a RATE_LIMITED answer pays for the look-up.
 */
function headersOf(answer: Verdict): Record<string, string> | undefined {
  if (answer.code !== 'RATE_LIMITED') return undefined
  const refused = answer.ratelimits?.find((limit) => limit.exceeded)
  // A name may hold any character; a header value only visible ASCII and spaces.
  return refused && HEADER_SAFE.test(refused.name) ? { 'unkey-ratelimit-triggered': refused.name } : undefined
}

const HEADER_SAFE = /^[\x20-\x7e]+$/

const NO_CONDITIONS: VerifyRequest = Object.freeze({ source: 'v1.verifyKey' })

/**
 * A validated body → the verdict (the answer but for its requestId): synchronous on a cache hit, and for an
 * unchanged key the very same frozen verdict every time (key-verifier.ts), which the fast route serialises once.
 */
function answerVerifyKey(
  verifier: KeyVerifier,
  body: VerifyKeyBodyInput,
  request: AddressedRequest,
): Verdict | Promise<Verdict> {
  // Names are resolved against the key's and its identity's limits once the key is known (key-verifier.ts).
  const ratelimits = body.ratelimits
  const query = body.authorization?.permissions
  if (query !== undefined) {
    const problem = queryProblem(query)
    if (problem) throw invalid('authorization.permissions', problem)
  }
  // Most requests carry only the key: no conditions object is built for them.
  const conditions: VerifyRequest =
    body.apiId === undefined &&
    query === undefined &&
    body.remaining === undefined &&
    ratelimits === undefined &&
    body.ratelimit === undefined &&
    body.tags === undefined
      ? NO_CONDITIONS
      : {
          source: 'v1.verifyKey',
          apiId: body.apiId,
          tags: body.tags,
          permissions: query as PermissionQuery | undefined,
          cost: body.remaining?.cost,
          ratelimits,
          keyLimitCost: body.ratelimit?.cost,
        }
  return verifier.verify(body.key, conditions, request)
}
