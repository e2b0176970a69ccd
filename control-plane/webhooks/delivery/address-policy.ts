import { promises as dns } from 'node:dns'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import { invalid } from '../../../shared/errors/errors.js'
import type { WebhookPolicy } from '../webhook-policy.js'

/** Resolves a host name to every address it has (dns.promises.lookup's shape; tests pass their own). */
export type HostLookup = (hostname: string, options: { all: true }) => Promise<{ address: string; family: number }[]>

/** The system's resolver, as every other client on the host resolves (getaddrinfo: /etc/hosts, then DNS). */
export const dnsLookup: HostLookup = dns.lookup

/** The longest endpoint URL: a URL is shown in every listing and sent on every delivery's log line. */
export const MAX_ENDPOINT_URL_LENGTH = 2048

/** Ranges no request can go to, whatever the policy: there is no one host there to deliver to. */
const NEVER = new Set(['unspecified', 'multicast', 'broadcast'])

/** How a refusal names ipaddr.js's ranges; any other is named as ipaddr.js names it (`6to4`, `teredo`, `as112`…). */
const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback',
  private: 'a private',
  linkLocal: 'a link-local',
  uniqueLocal: 'a unique-local',
  carrierGradeNat: 'a carrier-grade NAT',
  unspecified: 'an unspecified',
  multicast: 'a multicast',
  broadcast: 'the broadcast',
  reserved: 'a reserved',
  rfc6052: 'a NAT64',
  ipv4Compatible: 'an IPv4-compatible',
}

/**
 * IPv4-compatible IPv6 (`::a.b.c.d`, deprecated by RFC 4291): ipaddr.js calls it unicast, yet it names no public host,
 * and a host with a route for ::/96 (a SIT tunnel) reaches the IPv4 address inside, `::127.0.0.1` its loopback.
 */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96')
const isIpv4Compatible = (ip: ipaddr.IPv4 | ipaddr.IPv6) =>
  ip.kind() === 'ipv6' && ip.match(IPV4_COMPATIBLE) && !['unspecified', 'loopback'].includes(ip.range())

/**
 * An IPv6 address as WHATWG URL writes it, in hex only: ipaddr.js reads `::a.b.c.d` (how the resolver writes an
 * IPv4-compatible answer) as IPv4-mapped, which it is not.
 */
function hexWritten(address: string): string {
  if (isIP(address) !== 6) return address
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1)
  } catch {
    return address
  }
}

/**
 * Why the control plane may not send a request to `address` (an IPv4 or IPv6 address), or undefined when it may.
 * Only what ipaddr.js calls `unicast` is allowed: loopback, private, link-local, unique-local, carrier-grade NAT,
 * reserved and the other special ranges are the network the control plane runs in, which a root key must not be
 * able to reach through it. An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is judged as the IPv4 address it is; an
 * IPv4-compatible one (`::127.0.0.1`) is refused as such.
 * `allowPrivate` (WEBHOOK_ALLOW_PRIVATE) allows all of them but the unspecified, multicast and broadcast
 * addresses.
 */
export function addressRefusal(address: string, allowPrivate: boolean): string | undefined {
  const refused = refusedRange(address, allowPrivate)
  return refused && `${address} is ${refused.what}`
}

/**
 * What `address` is when it is refused (`a loopback address, not a public one`), and whether WEBHOOK_ALLOW_PRIVATE
 * would allow it; undefined when it is allowed.
 */
function refusedRange(address: string, allowPrivate: boolean): { what: string; privateOnly: boolean } | undefined {
  if (!ipaddr.isValid(address)) return { what: 'not an IP address', privateOnly: false }
  const ip = hexWritten(address)
  const range = isIpv4Compatible(ipaddr.parse(ip)) ? 'ipv4Compatible' : ipaddr.process(ip).range()
  if (range === 'unicast') return undefined
  const never = NEVER.has(range)
  if (allowPrivate && !never) return undefined
  return {
    what: `${RANGE_WORDS[range] ?? `a ${range}`} address${never ? '' : ', not a public one'}`,
    privateOnly: !never,
  }
}

/** What an operator sets for a refused address that is only private: a 400 says so, to whoever reads it. */
const ALLOW_PRIVATE_HINT =
  'to deliver inside your own network, start the control plane with WEBHOOK_ALLOW_PRIVATE=true (--webhook-allow-private)'

/**
 * The endpoint URL `url` as it will be stored (normalised by WHATWG URL rules: lower-case host, default port dropped,
 * IPv4 written in dots), or the 400 naming `url` and why it is refused: not http(s), credentials in it (they would
 * show in every listing), longer than MAX_ENDPOINT_URL_LENGTH, or a host that resolves to no address or to any
 * address addressRefusal refuses. An IP literal is judged as it is, without DNS. A host can resolve otherwise later
 * (DNS rebinding): deliveries check the address they connect to again.
 */
export async function checkEndpointUrl(
  url: string,
  policy: WebhookPolicy,
  lookup: HostLookup = dnsLookup,
): Promise<string> {
  if (url.length > MAX_ENDPOINT_URL_LENGTH)
    throw invalid('url', `must be at most ${MAX_ENDPOINT_URL_LENGTH} characters`)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw invalid('url', 'is not a URL')
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw invalid('url', `must be an http or https URL, not ${parsed.protocol.slice(0, -1)}`)
  if (parsed.username !== '' || parsed.password !== '')
    throw invalid('url', 'must not hold credentials (user:password@): they would show wherever the endpoint is listed')
  // An IPv6 literal's host is bracketed (`[::1]`).
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1')
  const addresses = isIP(host) !== 0 ? [host] : await resolved(host, lookup)
  for (const address of addresses) {
    const refused = refusedRange(address, policy.allowPrivateAddresses)
    if (refused === undefined) continue
    const refusal =
      address === host ? `${address} is ${refused.what}` : `${host} resolves to ${address}, ${refused.what}`
    throw invalid('url', refused.privateOnly ? `${refusal}; ${ALLOW_PRIVATE_HINT}` : refusal)
  }
  return parsed.href
}

/** Every address `host` resolves to; a 400 when it resolves to none (a host that may work later is not taken now). */
async function resolved(host: string, lookup: HostLookup): Promise<string[]> {
  let addresses: { address: string }[]
  try {
    addresses = await lookup(host, { all: true })
  } catch {
    addresses = []
  }
  if (addresses.length === 0) throw invalid('url', `${host} does not resolve to an address`)
  return addresses.map(({ address }) => address)
}
