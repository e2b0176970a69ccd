import ipaddr from 'ipaddr.js'
import { invalid } from '../errors/errors.js'

/** A parsed IPv4 or IPv6 address (ipaddr.js). */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6

/** An allow-list's bounds, as the schemas of every operation that sets one hold them. */
export const ALLOWLIST_LIMITS = { entries: 100, entryLength: 64 } as const

/**
 * An allow-list as a request gives it, and the name its wire gives the field (v1 `ipWhitelist`, v2 `ipAllowlist`), so
 * that a refusal names the entry where the caller wrote it: `ipWhitelist.2: "10.0.0.0/33" is not …`.
 */
export interface AllowlistInput {
  field: string
  entries: readonly string[]
}

/**
 * The allow-list to store (normalised entries, each once, in the order given), or undefined for an empty one (no
 * list: every address is allowed). Throws the contract's 400 naming the first entry that is not an address or range.
 */
export function normalisedAllowlist(input: AllowlistInput): string[] | undefined {
  const entries: string[] = []
  input.entries.forEach((entry, i) => {
    const normal = normalisedEntry(entry)
    if (normal === undefined) {
      throw invalid(
        `${input.field}.${i}`,
        `${JSON.stringify(entry)} is not an IP address or CIDR range (such as 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32)`,
      )
    }
    if (!entries.includes(normal)) entries.push(normal)
  })
  return entries.length > 0 ? entries : undefined
}

/**
 * One entry as stored: `<network address>/<prefix length>`, host bits cleared (`10.1.2.3/8` is `10.0.0.0/8`), a bare
 * address as /32 or /128, and an IPv4-mapped IPv6 address or range (`::ffff:a.b.c.d`, from /96 on) as the IPv4 one,
 * which is how a client's mapped address is matched. Undefined for anything else: IPv4 only in four decimal parts (no
 * `127.1`, `0x7f.0.0.1` or leading zeros), IPv6 without a zone.
 */
export function normalisedEntry(entry: string): string | undefined {
  if (entry.length > ALLOWLIST_LIMITS.entryLength) return undefined
  const slash = entry.indexOf('/')
  const bitsText = slash < 0 ? undefined : entry.slice(slash + 1)
  const parsed = strictAddress(slash < 0 ? entry : entry.slice(0, slash))
  if (parsed === undefined || (bitsText !== undefined && !/^(0|[1-9]\d{0,2})$/.test(bitsText))) return undefined
  let address: IpAddress = parsed
  const width = isIPv6(address) ? 128 : 32
  let bits = bitsText === undefined ? width : Number(bitsText)
  if (bits > width) return undefined
  if (isIPv6(address) && address.isIPv4MappedAddress() && bits >= 96) {
    address = address.toIPv4Address()
    bits -= 96
  }
  const network = isIPv6(address)
    ? ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${bits}`)
    : ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${bits}`)
  return `${network.toString()}/${bits}`
}

const isIPv6 = (address: IpAddress): address is ipaddr.IPv6 => address.kind() === 'ipv6'

/** An address as a list entry may write it: IPv4 in four decimal parts, or IPv6 (no zone). */
function strictAddress(text: string): IpAddress | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text)
  const hex = hexIPv6(text)
  return hex !== undefined && ipaddr.IPv6.isValid(hex) ? ipaddr.IPv6.parse(hex) : undefined
}

/**
 * IPv6 text with its trailing IPv4 part (`::ffff:10.0.0.1`), if any, written as the two groups it stands for (that part
 * in four decimal parts too); undefined for anything else with a dot or a zone. ipaddr.js reads every `::a.b.c.d` as
 * IPv4-mapped (`::ffff:a.b.c.d`), which an IPv4-compatible address (::/96, shown so by Node) is not.
 */
function hexIPv6(text: string): string | undefined {
  if (text.includes('%')) return undefined
  const colon = text.lastIndexOf(':')
  const tail = text.slice(colon + 1)
  if (!tail.includes('.')) return text.includes('.') ? undefined : text
  if (colon < 1 || !ipaddr.IPv4.isValidFourPartDecimal(tail)) return undefined
  const [a, b, c, d] = ipaddr.IPv4.parse(tail).octets as [number, number, number, number]
  return `${text.slice(0, colon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
}

/**
 * A client's address as a socket or an X-Forwarded-For entry gives it (an IPv6 address's zone is ignored), IPv4-mapped
 * IPv6 (`::ffff:a.b.c.d`, how a dual-stack socket shows an IPv4 peer) as the IPv4 address; undefined if it is none.
 */
export function parseClientAddress(text: string): IpAddress | undefined {
  const zone = text.indexOf('%')
  // A zone (`%eth0`) names an interface of a link-local IPv6 address; IPv4 has none.
  if (zone >= 0 && !text.slice(0, zone).includes(':')) return undefined
  const address = strictAddress(zone < 0 ? text : text.slice(0, zone))
  return address !== undefined && isIPv6(address) && address.isIPv4MappedAddress() ? address.toIPv4Address() : address
}

/** A stored allow-list, parsed: its ranges by family. */
export interface CompiledAllowlist {
  readonly v4: readonly (readonly [ipaddr.IPv4, number])[]
  readonly v6: readonly (readonly [ipaddr.IPv6, number])[]
}

// Parsed once per stored list: a key's list (its cached record holds the array) and an api's (the settings the
// verifier caches) are parsed when first checked, not per request, and dropped with the record that holds them.
const compiled = new WeakMap<readonly string[], CompiledAllowlist>()

/**
 * A stored list's ranges. An entry that is not a range (never written so: entries are normalised before they are
 * stored) matches nothing; the list still allows only what its other entries do.
 */
export function compiledAllowlist(list: readonly string[]): CompiledAllowlist {
  let ranges = compiled.get(list)
  if (ranges === undefined) {
    const v4: [ipaddr.IPv4, number][] = []
    const v6: [ipaddr.IPv6, number][] = []
    for (const entry of list) {
      if (!ipaddr.isValidCIDR(entry)) continue
      const [address, bits] = ipaddr.parseCIDR(entry)
      if (address.kind() === 'ipv4') v4.push([address as ipaddr.IPv4, bits])
      else v6.push([address as ipaddr.IPv6, bits])
    }
    ranges = Object.freeze({ v4, v6 })
    compiled.set(list, ranges)
  }
  return ranges
}

/** Whether `address` is in one of the list's ranges; no address (none could be told) is in none. */
export function allowlistAllows(list: CompiledAllowlist, address: IpAddress | undefined): boolean {
  if (address === undefined) return false
  if (isIPv6(address)) {
    for (const [range, bits] of list.v6) if (address.match(range, bits)) return true
    return false
  }
  for (const [range, bits] of list.v4) if (address.match(range, bits)) return true
  return false
}
