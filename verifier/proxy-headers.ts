import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http'

// RFC 9110 §7.6.1: headers that describe one connection, never forwarded.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  // Node's server has already answered 100 Continue; undici refuses the header (and would 502).
  'expect',
])

/** Hop-by-hop headers plus any the Connection header names. */
function hopByHop(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Set<string> {
  const named = new Set(HOP_BY_HOP)
  const connection = headers.connection
  for (const value of [connection].flat()) {
    for (const name of String(value ?? '').split(',')) if (name.trim()) named.add(name.trim().toLowerCase())
  }
  return named
}

export interface ForwardedIdentity {
  keyId: string
  ownerId?: string
  requestId: string
  clientAddress?: string
  /** Header that carried the key (lower case), always removed. */
  keyHeader: string
  /** Whether the key came in Authorization (then it is removed too). */
  keyInAuthorization: boolean
}

/**
 * The request headers the upstream gets: the client's, less hop-by-hop headers, the key and any
 * X-Keygate-* the client sent; plus who the key is and X-Forwarded-*.
 */
export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  who: ForwardedIdentity,
): Record<string, string | string[]> {
  const drop = hopByHop(incoming)
  drop.add(who.keyHeader)
  drop.add('host')
  // What the client claims about earlier hops is not ours to vouch for (X-Forwarded-For is appended to).
  drop.add('forwarded')
  drop.add('x-forwarded-proto')
  drop.add('x-forwarded-host')
  if (who.keyInAuthorization) drop.add('authorization')
  const headers: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || drop.has(name) || name.startsWith('x-keygate-')) continue
    headers[name] = value
  }
  headers['x-keygate-key-id'] = who.keyId
  if (who.ownerId !== undefined) headers['x-keygate-owner-id'] = headerSafe(who.ownerId)
  headers['x-request-id'] = who.requestId
  const forwardedFor = [incoming['x-forwarded-for'], who.clientAddress].flat().filter(Boolean).join(', ')
  if (forwardedFor) headers['x-forwarded-for'] = forwardedFor
  if (incoming.host) headers['x-forwarded-host'] = incoming.host
  headers['x-forwarded-proto'] = 'http'
  return headers
}

/**
 * A value that may be any string (an owner id) as a header value: visible ASCII passes as is, anything
 * else (non-ASCII, control characters) is percent-encoded, so a key never fails at a gateway for its owner.
 */
export function headerSafe(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) && !value.includes('%') ? value : encodeURIComponent(value)
}

/** The response headers the client gets: the upstream's, less hop-by-hop headers. */
export function clientResponseHeaders(upstream: Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  const drop = hopByHop(upstream)
  const headers: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(upstream)) {
    if (value !== undefined && !drop.has(name)) headers[name] = value
  }
  return headers
}
