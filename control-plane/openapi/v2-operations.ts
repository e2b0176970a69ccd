import type { ErrorCode } from '../../shared/errors/errors.js'
import type { OperationDoc } from '../../shared/http/operation-doc.js'
import { LIVENESS_ROUTES } from '../http/liveness.js'
import { V2_LIMIT_DOC, V2_MULTI_LIMIT_DOC } from '../../shared/ratelimits/limit-contract.v2.js'
import { V2_VERIFY_KEY_DOC } from '../../shared/verification/verify-key-contract.v2.js'

/** An operation that names no record that could be missing (a create, a list): no 404, as Unkey documents them. */
export const NAMES_NO_RECORD: ErrorCode[] = [
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'INSUFFICIENT_PERMISSIONS',
  'RATE_LIMITED',
  'INTERNAL_SERVER_ERROR',
  'UNAVAILABLE',
]
/** A create of a record with a unique name or externalId: 409 when it exists already. */
export const CREATES: ErrorCode[] = [...NAMES_NO_RECORD, 'CONFLICT']

/**
 * Unkey's v2 wire format: `POST /v2/<service>.<method>`, every answer in `{meta, data}`, every error a problem body.
 * Ids are `v2.` and the operation (`v2.keys.createKey` is served at `/v2/keys.createKey`). Every operation but
 * liveness takes a root key, verifyKey included. What the verifier serves too keeps its doc in its contract, beside its
 * schemas (shared/verification/, shared/ratelimits/).
 */
export const V2_OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'v2.keys.verifyKey': V2_VERIFY_KEY_DOC,
  'v2.ratelimit.limit': V2_LIMIT_DOC,
  'v2.ratelimit.multiLimit': V2_MULTI_LIMIT_DOC,
  'v2.liveness': LIVENESS_ROUTES[1].doc,
}
