import type { IncomingHttpHeaders } from 'node:http'
import type { Socket } from 'node:net'

/** A Host header as RFC 9110 allows it for a name, an IPv4 or a bracketed IPv6 address, with an optional port. */
const HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/

/** `host:port` of this server as the client reached it: its Host header when well-formed, else the socket's address. */
function authorityOf(socket: Socket, host: string | undefined): string {
  if (host !== undefined && HOST.test(host)) return host
  const address = socket.localAddress ?? '127.0.0.1'
  return `${address.includes(':') ? `[${address}]` : address}:${socket.localPort ?? 80}`
}

/**
 * The absolute base of an error's `docs` link: the configured one when it is a URL (DOCS_BASE_URL: a public address
 * that a client of the verifier's port or of the reverse proxy can reach), else the configured path on this server,
 * at the address the request came to. A link is followed by a person reading the answer, often far from where it was
 * sent (a log, a ticket): a bare path would not say which server to ask.
 */
export function docsBaseFor(configured: string, request: { headers: IncomingHttpHeaders; socket: Socket }): string {
  return configured.startsWith('/')
    ? `http://${authorityOf(request.socket, request.headers.host)}${configured}`
    : configured
}

/** The same, for an answer written on the socket before any request was parsed (a malformed one): no Host header. */
export function docsBaseForSocket(configured: string, socket: Socket): string {
  return configured.startsWith('/') ? `http://${authorityOf(socket, undefined)}${configured}` : configured
}
