import type { IncomingMessage } from 'node:http'
import { newId } from '../ids.js'

const ACCEPTED = /^[A-Za-z0-9._-]{1,128}$/

/** An incoming X-Request-Id that is safe to echo, else a new `req_…`. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id']
  return typeof incoming === 'string' && ACCEPTED.test(incoming) ? incoming : newId('req')
}
