import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const ACCEPTED = /^[A-Za-z0-9._-]{1,128}$/
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'

// Request ids must be unique, not unpredictable: a random per-process prefix (12 base58 digits, ~70 bits) and a
// counter. Drawing random bytes for every request cost 7% of a verifier's time on the hot path.
const prefix = Array.from(randomBytes(12), (byte) => BASE58[byte % 58]).join('')
let counter = 0

/** A new `req_…` id: 22 base58 digits, like the contract's other ids. */
export function newRequestId(): string {
  let n = ++counter
  let digits = ''
  for (let i = 0; i < 10; i++) {
    digits = BASE58[n % 58] + digits
    n = Math.floor(n / 58)
  }
  return `req_${prefix}${digits}`
}

/** An incoming X-Request-Id that is safe to echo, else a new `req_…`. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id']
  return typeof incoming === 'string' && ACCEPTED.test(incoming) ? incoming : newRequestId()
}
