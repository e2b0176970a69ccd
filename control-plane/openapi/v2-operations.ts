import type { ErrorCode } from '../../shared/errors.js'
import type { OperationDoc } from './operation-doc.js'

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
 * liveness takes a root key, verifyKey included.
 */
export const V2_OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'v2.keys.verifyKey': {
    summary: 'Verify a key (200 for a well-formed request: `valid` and `code` say the verdict)',
    description:
      'What your API calls, usually on the verifier sidecar. Needs a root key with `api.*.verify_key` or `api.<apiId>.verify_key`; a root key without it learns nothing about the key: the answer is `valid: false` with `code: NOT_FOUND`, as Unkey answers. A key that does not verify is an answer, not an error.',
    rootKey: true,
    tag: 'v2 keys',
    // Served beside the management API, not in it: no management rate limit (a key's own limits are verdicts).
    errors: ['BAD_REQUEST', 'UNAUTHORIZED', 'INTERNAL_SERVER_ERROR', 'UNAVAILABLE'],
  },
  'v2.ratelimit.limit': {
    summary: 'Count a call of an identifier in a namespace: may it go on?',
    description:
      'Also served by the verifier sidecar, from memory (`@unkey/ratelimit` calls it). Needs `ratelimit.<namespaceId|*>.limit`; a namespace named for the first time is made when the root key also has `ratelimit.*.create_namespace`. A call over the limit is an answer (`success: false`), not an error.',
    rootKey: true,
    tag: 'v2 ratelimit',
  },
  'v2.ratelimit.multiLimit': {
    summary: 'Count a call against several limits at once: may it go on?',
    description:
      'Also served by the verifier sidecar. Needs `ratelimit.*.limit`, or `ratelimit.<namespaceId>.limit` on every namespace named.',
    rootKey: true,
    tag: 'v2 ratelimit',
  },
  'v2.liveness': {
    summary: 'Whether the service is up (the one v2 operation without a root key)',
    rootKey: false,
    tag: 'v2 health',
    errors: [],
  },
}
