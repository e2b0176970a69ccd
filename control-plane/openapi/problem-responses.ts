import { Type, type TSchema } from 'typebox'
import { ApiError, invalid, notFound, type ErrorCode } from '../../shared/errors/errors.js'
import { problemBody, problemContentType, problemStatus } from '../../shared/http/problem-body.js'
import { noRootKey, rootKeyNotValid } from '../../shared/root-keys/root-key-principal.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'

/**
 * Errors as v2 renders them (shared/http/problem-body.ts), for the examples: built by problemBody itself, so that
 * each example's `title`, `type` and `status` are what the server sends.
 */
const EXAMPLES: ApiError[] = [
  invalid('apiId', 'is required'),
  noRootKey('missing'),
  noRootKey('malformed'),
  rootKeyNotValid(),
  new ApiError('INSUFFICIENT_PERMISSIONS', `the root key needs api.${WIRE_EXAMPLES.apiId}.create_key`),
  notFound('key', `key ${WIRE_EXAMPLES.keyId} not found`),
  notFound('api', `api ${WIRE_EXAMPLES.apiId} not found`),
  new ApiError('CONFLICT', 'a permission with slug documents.read exists already'),
  new ApiError('RATE_LIMITED', 'this root key made more than 6000 management calls in a minute; retry in 12 s'),
  new ApiError('INTERNAL_SERVER_ERROR', 'internal error; the request id identifies it in our logs'),
  new ApiError('UNAVAILABLE', 'the store cannot be reached; retry later'),
]

/** What each status means on a v2 operation. */
const MEANING: Record<number, string> = {
  400: 'The request is malformed (`errors` lists each failed check and where), or the `Authorization` header is missing or not `Bearer <root key>` (type `…/authentication/missing` or `…/authentication/malformed`).',
  401: 'The root key is not valid: unknown, revoked, or the bootstrap key turned off.',
  403: 'The root key lacks the permission the operation needs (`detail` names it).',
  404: 'The record the request names does not exist: `type` says which kind (`…/data/key_not_found`, `…/data/api_not_found`…).',
  409: 'A record with the same name or externalId exists already: nothing was written.',
  429: 'Too many management calls for this root key (Retry-After says when to retry). `application/problem+json`, as Unkey sends it.',
  500: 'Something failed on our side (the request id finds it in the logs).',
  503: 'The store cannot be reached, the server cannot answer correctly now, or it is shutting down: retry.',
}
/** A v2 operation that takes no root key answers a malformed request with 400 too, but never an auth problem. */
const MEANING_WITHOUT_ROOT_KEY: Record<number, string> = {
  400: 'The request is malformed: `errors` lists each failed check and where.',
}

/** The HTTP status v2 answers an error code with (a root key not valid: 401; v1 answers 403). */
const statusOf = (code: ErrorCode): number => problemStatus(new ApiError(code, ''))

/** The problem body of one status, with the examples of the errors that have that status. */
function problemSchema(status: number, description: string, examples: ApiError[]): TSchema {
  const bodies = examples.map((example) => problemBody(example, WIRE_EXAMPLES.requestId))
  const error = {
    title: Type.String({
      description: 'The status in words',
      examples: [...new Set(bodies.map((b) => b.error.title))],
    }),
    detail: Type.String({
      description: 'What went wrong in this request, for people',
      examples: [...new Set(bodies.map((body) => body.error.detail))],
    }),
    status: Type.Literal(status, { description: 'The HTTP status, repeated' }),
    type: Type.String({
      description:
        "The problem, as a link to Unkey's page on it (`https://unkey.com/docs/errors/…`): match on it, not on `detail`",
      examples: [...new Set(bodies.map((body) => body.error.type))],
    }),
  }
  return Type.Object(
    {
      meta: Type.Object(
        {
          requestId: Type.String({
            description: 'Finds the request in the logs (also the X-Request-Id header)',
            examples: [WIRE_EXAMPLES.requestId],
          }),
        },
        { description: 'About the request' },
      ),
      error: Type.Object(
        status === 400
          ? {
              ...error,
              errors: Type.Array(
                Type.Object({
                  location: Type.String({
                    description: 'Where: `body.<field>` or `header.<name>`',
                    examples: ['body.apiId', 'header.authorization'],
                  }),
                  message: Type.String({ description: 'What is wrong there', examples: ['is required'] }),
                }),
                { description: 'Each failed check of the request' },
              ),
            }
          : error,
        { description: 'What went wrong (RFC 7807 problem details)' },
      ),
    },
    { description },
  )
}

/**
 * A v2 operation's error answers by status, as OpenAPI responses: problem bodies as `application/json`, but
 * `application/problem+json` for 429 (what Unkey's SDK parses each of them as).
 */
export function problemResponses(codes: readonly ErrorCode[], rootKey: boolean, path: string): Record<string, object> {
  const statuses = new Set(codes.map(statusOf))
  // A missing or malformed Authorization header is a 400 on v2, even for an operation that lists no BAD_REQUEST.
  if (rootKey && codes.includes('UNAUTHORIZED')) statuses.add(400)
  const responses: Record<string, object> = {}
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const examples = EXAMPLES.filter((example) => codes.includes(example.code) && problemStatus(example) === status)
    const description = (!rootKey && MEANING_WITHOUT_ROOT_KEY[status]) || MEANING[status] || 'An error'
    responses[String(status)] = {
      description,
      content: {
        [problemContentType(status, path).split(';')[0]!]: { schema: problemSchema(status, description, examples) },
      },
    }
  }
  return responses
}
