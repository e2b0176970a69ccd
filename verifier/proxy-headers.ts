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

/**
 * The hop-by-hop headers of one message beyond the standard ones: those its Connection header names. Undefined when
 * it names nothing beyond keep-alive (almost always, on a hot connection): then no set is built per message.
 */
function namedByConnection(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): Set<string> | undefined {
  const connection = headers.connection
  if (connection === undefined || (typeof connection === 'string' && PLAIN_CONNECTION.test(connection)))
    return undefined
  const named = new Set(HOP_BY_HOP)
  for (const value of [connection].flat()) {
    for (const name of String(value).split(',')) if (name.trim()) named.add(name.trim().toLowerCase())
  }
  return named
}

/** Whether a header is hop-by-hop: one of the standard ones, or (`named`) one the Connection header names. */
const isHopByHop = (name: string, named: Set<string> | undefined): boolean =>
  named === undefined ? HOP_BY_HOP.has(name) : named.has(name)

// keep-alive is hop-by-hop already: a Connection header naming only it adds nothing to drop. `close` is not in the
// list, so a header named close is dropped when Connection names it (§7.6.1), as any other.
const PLAIN_CONNECTION = /^\s*keep-alive\s*$/i

// The host is the upstream's to set; what the client claims about earlier hops or its own address is not ours to
// vouch for: X-Real-IP is replaced by the socket's address, X-Forwarded-For is appended to.
const CLIENT_CLAIMS = new Set(['host', 'forwarded', 'x-forwarded-proto', 'x-forwarded-host', 'x-real-ip'])

/** Whether a header's value holds the key anywhere: `Bearer <key>`, any other scheme, a copy in another header. */
const carries = (value: string | string[], key: string): boolean =>
  typeof value === 'string' ? value.includes(key) : value.some((item) => item.includes(key))

/**
 * Whether an Authorization value holds the key: as sent (`Bearer <key>`), or in its credentials once base64-decoded,
 * as Basic carries them (`Basic base64(user:key)`; any scheme written so, base64url too).
 */
function authorizationCarries(value: string | string[], key: string): boolean {
  if (carries(value, key)) return true
  return [value].flat().some((item) => {
    const credentials = item.slice(item.indexOf(' ') + 1).trim()
    return Buffer.from(credentials, 'base64').toString('utf8').includes(key)
  })
}

export interface ForwardedIdentity {
  keyId: string
  ownerId?: string
  requestId: string
  clientAddress?: string
  /** The policy's key header (lower case): always removed, whatever it holds. */
  keyHeader: string
  /** The verified key, as sent: every header whose value holds it is removed, whichever header it was read from. */
  key: string
  /**
   * Whether Authorization is passed on when it does not hold the key, as sent or base64-encoded (Basic credentials).
   * Off, it is removed: the proxy authenticated the request, and a credential it did not verify (a second key,
   * `Basic base64(user:key)`) is not its to hand on.
   */
  passAuthorization: boolean
}

/**
 * The request headers the upstream gets: the client's, less hop-by-hop headers, the key header, Authorization (unless
 * `passAuthorization`, and even then if it holds the key, base64-encoded too), any header holding the key and any
 * X-Keygate-* the client sent; plus who the key is, X-Real-IP and X-Forwarded-*.
 */
export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  who: ForwardedIdentity,
): Record<string, string | string[]> {
  const named = namedByConnection(incoming)
  const headers: Record<string, string | string[]> = {}
  for (const name in incoming) {
    const value = incoming[name]
    if (value === undefined || isHopByHop(name, named) || name === who.keyHeader || CLIENT_CLAIMS.has(name)) continue
    if (name === 'authorization' && (!who.passAuthorization || authorizationCarries(value, who.key))) continue
    if (name.startsWith('x-keygate-') || carries(value, who.key)) continue
    headers[name] = value
  }
  headers['x-keygate-key-id'] = who.keyId
  if (who.ownerId !== undefined) headers['x-keygate-owner-id'] = headerSafe(who.ownerId)
  headers['x-request-id'] = who.requestId
  // The earlier hops, then this client: no array is built unless the header came as one (node joins repeats). A list
  // or a Host holding the key is dropped as any header holding it is.
  const claimed = incoming['x-forwarded-for']
  const earlier = claimed !== undefined && carries(claimed, who.key) ? undefined : claimed
  const before = Array.isArray(earlier) ? earlier.filter(Boolean).join(', ') : earlier
  const forwardedFor = !before ? who.clientAddress : who.clientAddress ? `${before}, ${who.clientAddress}` : before
  if (forwardedFor) headers['x-forwarded-for'] = forwardedFor
  if (who.clientAddress) headers['x-real-ip'] = who.clientAddress
  if (incoming.host && !carries(incoming.host, who.key)) headers['x-forwarded-host'] = incoming.host
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

/**
 * The response headers the client gets: the upstream's, less hop-by-hop headers, and this request's id. Built in one
 * object (not spread into another per request: a spread copy takes V8's slow path and allocates per request, and
 * makes writeHead's walk over it slower too).
 */
export function clientResponseHeaders(
  upstream: Record<string, string | string[] | undefined>,
  requestId: string,
): OutgoingHttpHeaders {
  const named = namedByConnection(upstream)
  const headers: OutgoingHttpHeaders = {}
  for (const name in upstream) {
    const value = upstream[name]
    if (value !== undefined && !isHopByHop(name, named) && name !== 'x-request-id') headers[name] = value
  }
  headers['x-request-id'] = requestId
  return headers
}
