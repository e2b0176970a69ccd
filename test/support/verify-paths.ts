import { request } from 'undici'
import { expect } from 'vitest'
import type { KeygateServer } from '../../shared/http/build-server.js'

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
