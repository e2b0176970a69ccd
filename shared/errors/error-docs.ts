import type { ErrorCode } from './errors.js'

/**
 * What an error code means and how to fix it: the text of its page at /docs/errors/<CODE> (http/error-pages.ts). The
 * codes a gateway refuses with have theirs in gateway-error-docs.ts; documented-codes.ts joins the two.
 */
export interface ErrorDoc {
  /** One line: the situation. */
  title: string
  /** When it is answered, in sentences. */
  meaning: string[]
  /** What to do, in sentences. */
  fix: string[]
}

/** One entry per code of the table in errors.ts: the type makes a new code fail to compile until it is written up. */
export const ERROR_DOCS: Readonly<Record<ErrorCode, ErrorDoc>> = {
  BAD_REQUEST: {
    title: 'The request could not be used as sent',
    meaning: [
      'The body is not JSON, or a field has the wrong type, is missing, is not a field of the operation, or is out of range.',
      'It is answered before anything is read or written: nothing changed.',
    ],
    fix: [
      'Read `message`: it names the field and the rule (`apiId: is required`, `key: must not be empty`, `nmae: is not a known field (did you mean name?)`), or, for a body that is not JSON, the position where it stops being JSON.',
      'Every field of every operation, with its limits, is in the API reference (`/docs` and `/openapi.json` on the control plane).',
    ],
  },
  UNAUTHORIZED: {
    title: 'No root key, or not a valid one',
    meaning: [
      'Management operations (`apis.*`, `keys.*` but verifyKey, `audit.*`) need a root key in `Authorization: Bearer <root key>`; the header was missing, malformed, or named no root key.',
      'It is checked before the body is read. The answer carries `WWW-Authenticate: Bearer`.',
      'The status is 403 (not 401) because Unkey v1 answered so: the code, not the status, tells it from `INSUFFICIENT_PERMISSIONS`.',
    ],
    fix: [
      'Send the root key that `keygate dev` printed, the one set as `KEYGATE_ROOT_KEY`, or one made by `keygate root-key create`: `-H "Authorization: Bearer $ROOT_KEY"`.',
      'Keys made by `keys.createKey` are not root keys: they are what `keys.verifyKey` checks, and it needs no root key.',
    ],
  },
  INSUFFICIENT_PERMISSIONS: {
    title: 'The root key (or, at a gateway, the API key) may not do this',
    meaning: [
      'The root key is valid but lacks the permission the operation needs; `message` names it, e.g. `api.api_123.create_key`.',
      "From a gateway (the reverse proxy, or `X-Keygate-Code` at `/v1/authorize`): the API key lacks a permission the request requires (`--require-permissions`, or the gateway's `X-Keygate-Permissions`).",
    ],
    fix: [
      "Use a root key that has it, or create one: `keygate root-key create --permissions 'api.<apiId|*>.<action>'` (or `*` for everything).",
      'Actions: create_api, read_api, delete_api, create_key, read_key, update_key, delete_key, read_analytics. `audit.list` needs `*`.',
      'At a gateway: use a key that holds the permission, or grant it with a root key (`keys.addPermissions`).',
    ],
  },
  NOT_FOUND: {
    title: 'No such api, key or operation',
    meaning: [
      'The id names no api or key (never created, or deleted), or no operation answers at the path.',
      '`keys.verifyKey` never answers this for an unknown key: it answers 200 with `valid: false` and `code: "NOT_FOUND"`.',
      'From a gateway (the reverse proxy, or `X-Keygate-Code` at `/v1/authorize`), with status 401: the API key sent is not a key (mistyped, deleted, or of another Keygate).',
    ],
    fix: [
      'Check the id: `apis.createApi` returns `apiId`, `keys.createKey` returns `keyId`, `apis.listKeys` lists the keys of an api.',
      'Operations are `/v1/<service>.<method>`, e.g. `POST /v1/keys.createKey`; for a near miss the message suggests the operation meant.',
      'At a gateway: send the key exactly as `keys.createKey` returned it.',
    ],
  },
  METHOD_NOT_ALLOWED: {
    title: 'The operation exists, not with this method',
    meaning: [
      'The path is an operation, but not with this HTTP method. The `Allow` header lists the methods it takes.',
    ],
    fix: ['Reads are GET with query parameters (`keys.getKey?keyId=…`); writes are POST with a JSON body.'],
  },
  REQUEST_TIMEOUT: {
    title: 'The request did not arrive in time',
    meaning: ['The headers took over 60 seconds, or the whole request over 30 seconds, to arrive.'],
    fix: ['Send the body at once, and check for a proxy or client that holds requests back.'],
  },
  CONFLICT: {
    title: 'A concurrent write won',
    meaning: [
      'A write lost five compare-and-set retries against other writes of the same key, or the generated key collided with an existing one (vanishingly rare). Nothing was written.',
      '`webhooks.updateEndpoint` or `webhooks.rotateSecret`: other changes of the endpoint landed first three times in a row, each change being made again over the one before it. Nothing was written.',
    ],
    fix: [
      'Retry. If it keeps happening, something writes the same key in a tight loop: make those writes one at a time.',
    ],
  },
  INVALID_SIGNATURE: {
    title: 'The request is not signed by a key Keygate trusts',
    meaning: [
      '`/v1/secret-scanning/github` acts only on reports GitHub signed: the signature headers are missing, name no key GitHub publishes (`SECRET_SCANNING_KEYS_URL`), or do not sign the body as it arrived.',
      'Nothing was read or changed.',
    ],
    fix: [
      'Send the body exactly as it was signed, with `Github-Public-Key-Identifier` and `Github-Public-Key-Signature` (base64 of an ECDSA P-256 SHA-256 signature).',
      'To report a leaked key without GitHub, call `keys.reportLeak` with a root key that holds `report_leak`.',
    ],
  },
  PRECONDITION_FAILED: {
    title: 'Something Keygate does not do',
    meaning: [
      '`recoverable: true` on createKey, or `decrypt=true` on getKey or listKeys: Keygate keeps only a hash of each key, so a key can never be shown again.',
      '`keys.updateRemaining` on a key that carries no credits.',
      '`analytics.getVerifications` or `analytics.getRatelimits` on a control plane that runs no analytics engine (`analytics_not_configured`): another control plane runs the embedded one, and only it answers them.',
    ],
    fix: [
      'Leave out `recoverable` and `decrypt`; keep the key that createKey returns if you need it again, or issue a new one with `keys.rerollKey`.',
      'Give the key credits first with `keys.updateKey {"keyId": …, "remaining": n}`.',
      'Send analytics queries to the control plane that runs the embedded engine (its log does not say `ingests and serves no analytics`).',
    ],
  },
  PAYLOAD_TOO_LARGE: {
    title: 'The body is too large',
    meaning: [
      'The body is over `BODY_LIMIT_BYTES` (1 MiB unless configured), or `meta` is over 64 KiB once serialised.',
    ],
    fix: [
      'Send less: `meta` is returned by every verification, so keep it small and keep larger data in your own store, by key id.',
      'The body limit is `--body-limit` / `BODY_LIMIT_BYTES`.',
    ],
  },
  UNSUPPORTED_MEDIA_TYPE: {
    title: 'A POST without a JSON content type',
    meaning: ['Every POST takes a JSON body and must say so, even when the body is empty.'],
    fix: ["Add `Content-Type: application/json` (curl: `-H 'Content-Type: application/json'`)."],
  },
  UNPROCESSABLE: {
    title: 'An analytics query ran into a limit',
    meaning: [
      '`analytics.getVerifications` or `analytics.getRatelimits` ran the query, and it took longer than 10 seconds (`query_execution_timeout`), needed more than 1 GB of memory or an answer larger than 4 MiB (`query_memory_limit_exceeded`), or answered more than 1,000,000 rows (`query_rows_limit_exceeded`): the problem type says which.',
    ],
    fix: [
      'Read less: filter on `time` and on the keys or identities you need, group by coarser periods, or read a rollup (`key_verifications_per_hour_v1`, `…_per_day_v1`) rather than the raw table.',
    ],
  },
  RATE_LIMITED: {
    title: 'Too many calls: management calls of a root key, or requests with an API key at a gateway',
    meaning: [
      'The root key made more than `MANAGEMENT_RATE_LIMIT` management calls this minute (6000 unless configured), counted by each control plane. `Retry-After` says when to try again.',
      '`keys.verifyKey` is never limited by it. A key that has used up its own rate limit is a verification answer instead: 200 with `code: "RATE_LIMITED"`.',
      '`webhooks.sendTest` while a test to the same endpoint is still waiting for its answer on that control plane: one at a time per endpoint. `Retry-After` is the webhook timeout.',
      '`analytics.getVerifications` and `analytics.getRatelimits` together ran 1,000 queries this hour (UTC): `query_quota_exceeded`. The count starts again on the hour.',
      'From a gateway (the reverse proxy, or `X-Keygate-Code` at `/v1/authorize`): the API key has used up its own rate limit; `Retry-After` and `RateLimit-*` say when it has room again.',
    ],
    fix: [
      'Wait `Retry-After` seconds, spread the calls out, or raise `--management-rate-limit` (0: no limit).',
      "At a gateway: wait `Retry-After` seconds, or raise the key's limit with a root key (`keys.updateKey` `ratelimit`).",
    ],
  },
  REQUEST_HEADER_FIELDS_TOO_LARGE: {
    title: 'The request headers are too large',
    meaning: ["The request headers are over Node.js's limit (16 KiB)."],
    fix: ['Send fewer or smaller headers (large cookies are the usual cause).'],
  },
  INTERNAL_SERVER_ERROR: {
    title: 'A bug on our side',
    meaning: [
      'Something failed that should not have. The message is hidden; the error is in the server log under the request id.',
    ],
    fix: [
      'Retry. If it persists, report it with `requestId` (also in the `X-Request-Id` header): it finds the error in the logs.',
    ],
  },
  BAD_GATEWAY: {
    title: 'The upstream could not be reached (reverse-proxy mode)',
    meaning: [
      'The verifier checked the key, but the API it forwards to (`UPSTREAM_URL`) refused or broke the connection, or answered with headers that cannot be passed on.',
    ],
    fix: ['Check that the upstream is running and that `--upstream` / `UPSTREAM_URL` points at it.'],
  },
  UNAVAILABLE: {
    title: 'Not available right now: retry',
    meaning: [
      'Redis cannot be reached (a write was not applied: each write is one atomic script), a verifier cannot confirm its cache is current within `MAX_STALENESS_MS` and fails closed, too many cache misses are already in flight (`MAX_PENDING_READS`), or the server is shutting down.',
    ],
    fix: [
      'Retry with backoff. `GET /readyz` on the server lists why it is not ready; check that Redis is up and reachable.',
    ],
  },
  GATEWAY_TIMEOUT: {
    title: 'The upstream did not answer in time (reverse-proxy mode)',
    meaning: [
      'The API the verifier forwards to sent no headers, or no next part of its body, within `UPSTREAM_TIMEOUT_MS`.',
    ],
    fix: ['Check the upstream, or raise `--upstream-timeout` / `UPSTREAM_TIMEOUT_MS` (30 s unless configured).'],
  },
}
