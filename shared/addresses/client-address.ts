import type { ClientAddressSettings } from '../config/settings.js'
import {
  allowlistAllows,
  compiledAllowlist,
  parseClientAddress,
  type CompiledAllowlist,
  type IpAddress,
} from './ip-allowlist.js'

/**
 * What a client's address is read from: a request as node:http has it (an IncomingMessage is one, and so is what
 * Fastify's inject makes), without anything else of HTTP.
 */
export interface AddressedRequest {
  readonly socket: { readonly remoteAddress?: string | undefined }
  readonly headers: { readonly [name: string]: string | string[] | undefined }
}

/** The client's address of a request, or undefined when none can be told (a list then allows nothing). */
export type ClientAddressOf = (request: AddressedRequest) => IpAddress | undefined

/**
 * Which address counts, as the operator configured it (CLIENT_ADDRESS, TRUSTED_PROXIES), built once:
 * - `socket`: the connection's peer. X-Forwarded-For is never read: any client can write it.
 * - `forwarded`: a request whose peer is a trusted proxy is from the address that proxy names: X-Forwarded-For is
 *   read from the right (each proxy appends the address it was called from), trusted proxies are skipped, and the
 *   first address that is not one is the client (if every one is, the leftmost). A request from any other peer is
 *   from that peer, whatever it sends. A malformed entry met before the client's makes the address unknown: the
 *   trusted proxy's own address is not the client's, and a list must not match it in the client's place.
 */
export function clientAddressOf(settings: ClientAddressSettings): ClientAddressOf {
  if (settings.mode === 'socket') return (request) => peerOf(request)
  const trusted = compiledAllowlist(settings.trustedProxies)
  return (request) => {
    const peer = peerOf(request)
    if (peer === undefined || !allowlistAllows(trusted, peer)) return peer
    const header = request.headers['x-forwarded-for']
    const forwarded = Array.isArray(header) ? header.join(',') : header
    // No header names no one: the trusted peer made the request itself.
    if (forwarded === undefined || forwarded.trim() === '') return peer
    return forwardedClient(forwarded, trusted)
  }
}

function peerOf(request: AddressedRequest): IpAddress | undefined {
  const address = request.socket.remoteAddress
  return address === undefined ? undefined : parseClientAddress(address)
}

/** The client X-Forwarded-For names behind trusted proxies; undefined when an entry on the way is not an address. */
function forwardedClient(header: string, trusted: CompiledAllowlist): IpAddress | undefined {
  const entries = header.split(',')
  let leftmost: IpAddress | undefined
  for (let i = entries.length - 1; i >= 0; i--) {
    const address = parseClientAddress(entries[i]!.trim())
    if (address === undefined) return undefined
    if (!allowlistAllows(trusted, address)) return address
    leftmost = address
  }
  return leftmost
}
