import type { OperationDoc } from '../http/operation-doc.js'

/** The verdict's header, on every answer. */
const KEYGATE_CODE = {
  description:
    'The verdict: VALID, NOT_FOUND, DISABLED, FORBIDDEN, EXPIRED, INSUFFICIENT_PERMISSIONS, RATE_LIMITED, USAGE_EXCEEDED, or MISSING_KEY (no key sent)',
}

/**
 * /v1/authorize (forward-auth), as the API reference describes it: the request headers it reads and each answer's
 * status and headers (it answers no JSON, so the doc says what a schema would). Served by the verifier
 * (verifier/authorize-route.ts) and by `keygate dev`; control-plane/openapi/operations.ts documents it from here.
 */
export const AUTHORIZE_DOC: OperationDoc = {
  summary: 'Forward-auth: verify the key of a request a gateway holds (status and headers only)',
  description:
    "For nginx `auth_request`, Envoy `ext_authz` and Traefik `forwardAuth`: any method, any body (never read), also at `/v1/authorize/<path>`. Served by the verifier and by `keygate dev`. The policy (api, permissions, cost) comes from the verifier's flags or the `X-Keygate-*` headers, which the gateway must set or clear.",
  rootKey: false,
  tag: 'gateway',
  methods: ['GET'],
  errors: ['UNAVAILABLE'],
  headers: {
    'x-api-key': { description: 'The key (the header is `KEY_HEADER`; `Authorization: Bearer <key>` works too)' },
    'x-keygate-api-id': { description: 'Only keys of this api (overrides --api-id; the gateway sets it)' },
    'x-keygate-permissions': {
      description: 'Comma-separated permissions the key must all have (overrides --require-permissions)',
    },
    'x-keygate-cost': { description: 'Credits the request costs, for keys with credits (overrides --cost)' },
  },
  responses: {
    200: {
      description: 'VALID: let the request through',
      headers: {
        'x-keygate-code': KEYGATE_CODE,
        'x-keygate-key-id': { description: "The key's id" },
        'x-keygate-owner-id': { description: "The key's externalId, percent-encoded beyond printable ASCII" },
        'x-keygate-remaining': { description: 'Credits left (keys with credits)' },
      },
    },
    401: {
      description: 'No key, or NOT_FOUND, DISABLED, EXPIRED (with `WWW-Authenticate: Bearer`)',
      headers: { 'x-keygate-code': KEYGATE_CODE },
    },
    403: {
      description:
        "FORBIDDEN (another api, or the request's address outside the key's or its api's IP allow-list) or INSUFFICIENT_PERMISSIONS",
      headers: { 'x-keygate-code': KEYGATE_CODE },
    },
    429: {
      description: 'RATE_LIMITED or USAGE_EXCEEDED',
      headers: {
        'x-keygate-code': KEYGATE_CODE,
        'retry-after': { description: 'Seconds until the window resets' },
        'ratelimit-limit': { description: 'Units per window' },
        'ratelimit-remaining': { description: 'Units left' },
        'ratelimit-reset': { description: 'Seconds until the window resets' },
      },
    },
  },
}
