import { clipInput } from '../shared/clip-input.js'
import { ApiError } from '../shared/errors/errors.js'
import { frozenWithMemo, memoOf } from '../shared/frozen-memo.js'
import type { Route, RouteRequest } from '../shared/http/route.js'
import { V2Envelope, type V2Answer } from '../shared/http/v2-route.js'
import { parsePermissionQuery, PermissionQuerySyntaxError } from '../shared/verification/permission-query-parser.js'
import { rateLimitId } from '../shared/ratelimits/ratelimit-id.js'
import type { RootKeyAuthenticator } from '../shared/root-keys/root-key-authenticator.js'
import { may, type Principal } from '../shared/root-keys/root-key-principal.js'
import type { Verdict, VerifyRequest } from '../shared/verification/verification.js'
import {
  V2_VERIFY_KEY_DOC,
  V2VerifyKeyBody,
  V2VerifyKeyData,
  type V2VerifyKeyBodyInput,
} from '../shared/verification/verify-key-contract.v2.js'
import type { KeyVerifier } from './key-verifier.js'
import { UnknownLimitError, type UnknownLimit } from './unknown-limit-error.js'

/**
 * POST /v2/keys.verifyKey, on the verifier and on the control plane alike: every call takes a root key (checked
 * before the body, as the management API's: a missing or malformed header 400, one not valid 401). A root key
 * without `api.*.verify_key` or `api.<the key's api>.verify_key` gets NOT_FOUND for the key, as a key that does not
 * exist, before anything of it is spent (Unkey's rule: it learns nothing of keys beyond its reach). Then the same
 * verification as v1's (KeyVerifier.verify), its verdict in v2's shape. Its contract (body, answer, the reference's
 * text) is shared/verification/verify-key-contract.v2.ts. One route (shared/http/route.ts), served as v1's is: ahead
 * of Fastify on a listening verifier, and as a Fastify route.
 */
export function v2VerifyKeyRoute(
  verifier: KeyVerifier,
  rootKeys: Pick<RootKeyAuthenticator, 'principalOf'>,
): Route<void, Principal> {
  return {
    id: 'v2.keys.verifyKey',
    method: 'POST',
    url: '/v2/keys.verifyKey',
    doc: V2_VERIFY_KEY_DOC,
    input: V2VerifyKeyBody,
    response: V2Envelope(V2VerifyKeyData),
    authenticate: (request) => rootKeys.principalOf(request.headers.authorization),
    handle(body: V2VerifyKeyBodyInput, principal, _deps, request: RouteRequest) {
      const conditions: VerifyRequest =
        body.permissions === undefined &&
        body.credits === undefined &&
        body.ratelimits === undefined &&
        body.tags === undefined
          ? NO_CONDITIONS
          : {
              source: 'v2.verifyKey',
              tags: body.tags,
              permissions: body.permissions === undefined ? undefined : queryOf(body.permissions),
              cost: body.credits?.cost,
              ratelimits: body.ratelimits?.map(({ name, cost, limit, duration }) => ({ name, cost, limit, duration })),
            }
      let verdict: Verdict | Promise<Verdict>
      try {
        const visible = (apiId: string) => may(principal, 'api', apiId, 'verify_key')
        verdict = verifier.verify(body.key, conditions, request.raw, visible)
      } catch (err) {
        return v2Error(err)
      }
      return verdict instanceof Promise ? verdict.then(answerOf, v2Error) : answerOf(verdict)
    },
  }
}

const NO_CONDITIONS: VerifyRequest = Object.freeze({ source: 'v2.verifyKey' })
// A memoised verdict is the same every time it is answered (key-verifier.ts): so is its v2 data, kept in the
// verdict's memo under this symbol (and frozen with a memo of its own, for the fast path's serialisation).
const V2_DATA = Symbol('v2 data')

function v2Error(err: unknown): never {
  throw err instanceof UnknownLimitError ? unknownLimit(err.limit) : err
}

function queryOf(text: string) {
  try {
    return parsePermissionQuery(text)
  } catch (err) {
    if (!(err instanceof PermissionQuerySyntaxError)) throw err
    throw new ApiError('BAD_REQUEST', `permissions: ${err.message}`, undefined, {
      problem: 'user/bad_request/permissions_query_syntax_error',
      fields: [{ location: 'body.permissions', message: err.message }],
    })
  }
}

/** Unkey v2 answers a limit the key and its identity lack 412 (v1: 400), naming both. */
function unknownLimit({ name, keyId, identity }: UnknownLimit): ApiError {
  const holder = identity
    ? `nor identity ${identity.id} (externalId ${JSON.stringify(clipInput(identity.externalId))})`
    : 'and there is no identity connected'
  return new ApiError(
    'PRECONDITION_FAILED',
    `ratelimit '${clipInput(name)}' was requested but does not exist for key '${keyId}' ${holder}; give limit and duration to define one for this call`,
  )
}

/** The verdict as v2 answers it: its `data` (the fast path serialises a memoised one once, by its memo). */
const answerOf = (verdict: Verdict): V2Answer<V2VerifyKeyData> => ({ data: dataOf(verdict) })

/** The verdict in v2's shape, made once for a memoised verdict. */
function dataOf(verdict: Verdict): V2VerifyKeyData {
  const memo = memoOf(verdict)
  if (memo === undefined) return freshDataOf(verdict)
  let data = memo[V2_DATA] as V2VerifyKeyData | undefined
  if (data === undefined) memo[V2_DATA] = data = frozenWithMemo(freshDataOf(verdict))
  return data
}

/** The verdict in v2's shape: a key not found (or hidden from this root key) shows nothing but its code. */
function freshDataOf(verdict: Verdict): V2VerifyKeyData {
  const { keyId } = verdict
  if (keyId === undefined) return { valid: false, code: 'NOT_FOUND' }
  const identity = verdict.identity
  return {
    valid: verdict.valid,
    code: verdict.code,
    keyId,
    name: verdict.name,
    meta: verdict.meta,
    expires: verdict.expires,
    credits: verdict.remaining,
    enabled: verdict.enabled,
    permissions: verdict.permissions,
    roles: verdict.roles,
    identity: identity && {
      id: identity.id,
      externalId: identity.externalId,
      meta: identity.meta,
      ratelimits: identity.ratelimits?.length
        ? identity.ratelimits.map(({ name, limit, duration, autoApply }) => ({
            id: rateLimitId(identity.id, name),
            name,
            limit,
            duration,
            autoApply: autoApply === true,
          }))
        : undefined,
    },
    ratelimits: verdict.ratelimits?.map(
      ({ name, limit, duration, reset, remaining, exceeded, autoApply, ofIdentity }) => ({
        // The limit's holder: the identity for one counted across its keys, else the key.
        id: rateLimitId(ofIdentity && identity ? identity.id : keyId, name),
        name,
        limit,
        duration,
        reset,
        remaining,
        exceeded,
        autoApply,
      }),
    ),
  }
}
