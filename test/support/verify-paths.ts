import fc from 'fast-check'
import { request } from 'undici'
import { expect } from 'vitest'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import type { KeygateServer } from '../../shared/http/keygate-server.js'

/** One answer of a verification endpoint, as a test compares it between the fast path and Fastify's route. */
export interface PathAnswer {
  status: number
  body: Record<string, any>
  contentType: string | undefined
  requestId: string | undefined
  /** Unkey-Ratelimit-Triggered: the limit that refused the call. */
  triggered: string | undefined
  /** WWW-Authenticate: said with a refused root key. */
  authenticate: string | undefined
}

const JSON_HEADERS = { 'content-type': 'application/json' }

/** Over HTTP to a listening verifier (`base`): the fast path, when it takes the request. */
export async function answerOverHttp(
  base: string,
  path: string,
  body: string,
  headers: Record<string, string> = JSON_HEADERS,
): Promise<PathAnswer> {
  const response = await request(`${base}${path}`, { method: 'POST', headers, body })
  const text = await response.body.text()
  // Every answer's Content-Length is its body's length in bytes (the fast path works it out without a scan).
  expect(response.headers['content-length']).toBe(String(Buffer.byteLength(text)))
  return {
    status: response.statusCode,
    body: JSON.parse(text) as Record<string, any>,
    contentType: response.headers['content-type'] as string,
    requestId: response.headers['x-request-id'] as string,
    triggered: response.headers['unkey-ratelimit-triggered'] as string | undefined,
    authenticate: response.headers['www-authenticate'] as string | undefined,
  }
}

/**
 * Through inject: Fastify's route. `host` is the one the HTTP request sends: v1's error bodies link their docs at the
 * address the request came to.
 */
export async function answerThroughFastify(
  app: KeygateServer,
  host: string,
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = JSON_HEADERS,
): Promise<PathAnswer> {
  const response = await app.inject({ method: 'POST', url: path, headers: { host, ...headers }, payload: body })
  return {
    status: response.statusCode,
    body: response.json(),
    contentType: response.headers['content-type'] as string,
    requestId: response.headers['x-request-id'] as string,
    triggered: response.headers['unkey-ratelimit-triggered'] as string | undefined,
    authenticate: response.headers['www-authenticate'] as string | undefined,
  }
}

/** Any JSON value of a small size, for generated request bodies' fields. */
export const anyFieldValue = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
)

/**
 * Request bodies as text: objects of some of `fields` (each any value its arbitrary gives), any JSON, or any short
 * text — never empty (an empty body is left to Fastify).
 */
export function anyBodyWith(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string> {
  return fc
    .oneof(
      fc.record(fields, { requiredKeys: [] }).map((body) => JSON.stringify(body)),
      fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
      fc.string({ maxLength: 40 }),
    )
    .filter((text) => text.length > 0)
}

/**
 * Runs `check` while the store can read neither a key nor the revisions (an unknown key's NOT_FOUND needs a fresh
 * poll instead of a read): every verification of a key not cached must fail closed.
 */
export async function whileStoreIsDown(
  store: {
    keys: { getKeyByHash: (hash: string) => Promise<unknown> }
    changes: { readRevisions: () => Promise<unknown> }
  },
  check: () => Promise<void>,
): Promise<void> {
  const { keys, changes } = store
  const read = keys.getKeyByHash
  const poll = changes.readRevisions
  const down = async (): Promise<never> => {
    throw new StoreUnavailableError('down')
  }
  keys.getKeyByHash = down
  changes.readRevisions = down
  try {
    await check()
  } finally {
    keys.getKeyByHash = read
    changes.readRevisions = poll
  }
}

/** keygate_http_requests_total of `route` with this status (any method), read from /metrics (0 if absent). */
export async function requestsCounted(app: KeygateServer, route: string, status: number): Promise<number> {
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
  const line = metrics
    .split('\n')
    .find(
      (l) =>
        l.startsWith('keygate_http_requests_total{') &&
        l.includes(`route="${route}"`) &&
        l.includes(`status="${status}"`),
    )
  return Number(line?.split(' ').pop() ?? 0)
}
