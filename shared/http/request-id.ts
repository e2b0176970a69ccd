import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const ACCEPTED = /^[A-Za-z0-9._-]{1,128}$/
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'

// Request ids must be unique, not unpredictable: a random per-process prefix (12 base58 digits, ~70 bits) and a
// counter. Random bytes are drawn once: drawing them for every request would put a costly call on the hot path.
const prefix = Array.from(randomBytes(12), (byte) => BASE58[byte % 58]).join('')
const DIGITS = 10
// The counter is kept as the id's own text, counted up in place (an odometer in base58): each id is then one flat
// string copied out of it, where building it digit by digit would make a chain of 10 joined strings that every later
// use (a header's check, the answer's body) would have to flatten first.
const id = Buffer.from(`req_${prefix}${BASE58[0]!.repeat(DIGITS)}`, 'latin1')
const FIRST = BASE58.charCodeAt(0)
const LAST = BASE58.charCodeAt(BASE58.length - 1)
const NEXT = new Uint8Array(128)
for (let i = 0; i < BASE58.length - 1; i++) NEXT[BASE58.charCodeAt(i)] = BASE58.charCodeAt(i + 1)

/** A new `req_…` id: 22 base58 digits, like the contract's other ids. */
export function newRequestId(): string {
  // 58^10 ids per process before the counter would wrap: it never does.
  countUp(id, DIGITS)
  return id.toString('latin1')
}

/** Counts the last `digits` base58 digits of `text` (latin1) up by one in place, carrying from right to left. */
export function countUp(text: Uint8Array, digits: number): void {
  for (let i = text.length - 1; i >= text.length - digits; i--) {
    const digit = text[i]!
    if (digit !== LAST) {
      text[i] = NEXT[digit]!
      return
    }
    text[i] = FIRST
  }
}

/** An incoming X-Request-Id that is safe to echo, else a new `req_…`. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id']
  return typeof incoming === 'string' && ACCEPTED.test(incoming) ? incoming : newRequestId()
}
