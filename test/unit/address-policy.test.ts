import { describe, expect, it } from 'vitest'
import { ApiError } from '../../shared/errors/errors.js'
import {
  addressRefusal,
  checkEndpointUrl,
  MAX_ENDPOINT_URL_LENGTH,
  type HostLookup,
} from '../../control-plane/webhooks/delivery/address-policy.js'
import { DEFAULT_WEBHOOK_POLICY } from '../../control-plane/webhooks/webhook-policy.js'

const PUBLIC = DEFAULT_WEBHOOK_POLICY
const PRIVATE_ALLOWED = { ...DEFAULT_WEBHOOK_POLICY, allowPrivateAddresses: true }

/** A resolver of a few names, as DNS would answer them, that records what it was asked. */
function resolver(names: Record<string, string[]>): HostLookup & { asked: string[] } {
  const asked: string[] = []
  const lookup = async (hostname: string, options: { all: true }) => {
    asked.push(hostname)
    expect(options).toEqual({ all: true })
    const addresses = names[hostname]
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
  return Object.assign(lookup, { asked })
}

/** The 400 checkEndpointUrl throws, as the client reads it. */
async function refusal(url: string, lookup: HostLookup = resolver({}), policy = PUBLIC) {
  try {
    await checkEndpointUrl(url, policy, lookup)
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError)
    const { code, message, details } = err as ApiError
    expect(code).toBe('BAD_REQUEST')
    expect(details?.fields?.[0]?.location).toBe('body.url')
    return message
  }
  throw new Error(`${url} was accepted`)
}

describe('addressRefusal', () => {
  it('allows public unicast addresses, v4 and v6', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(addressRefusal(address, false), address).toBeUndefined()
  })

  const NOT_PUBLIC = 'address, not a public one'
  /** Each address and what the refusal calls it; the last three kinds no policy allows. */
  const refused: [string, string][] = [
    ['127.0.0.1', `a loopback ${NOT_PUBLIC}`],
    ['127.255.0.9', `a loopback ${NOT_PUBLIC}`],
    ['::1', `a loopback ${NOT_PUBLIC}`],
    ['10.1.2.3', `a private ${NOT_PUBLIC}`],
    ['172.16.0.1', `a private ${NOT_PUBLIC}`],
    ['172.31.255.255', `a private ${NOT_PUBLIC}`],
    ['192.168.1.1', `a private ${NOT_PUBLIC}`],
    ['169.254.169.254', `a link-local ${NOT_PUBLIC}`],
    ['fe80::1', `a link-local ${NOT_PUBLIC}`],
    ['fc00::1', `a unique-local ${NOT_PUBLIC}`],
    ['fd12:3456::1', `a unique-local ${NOT_PUBLIC}`],
    ['100.64.0.1', `a carrier-grade NAT ${NOT_PUBLIC}`],
    ['192.0.2.1', `a reserved ${NOT_PUBLIC}`],
    ['240.0.0.1', `a reserved ${NOT_PUBLIC}`],
    ['2001:db8::1', `a reserved ${NOT_PUBLIC}`],
    // IPv4-mapped IPv6: the IPv4 address it is.
    ['::ffff:127.0.0.1', `a loopback ${NOT_PUBLIC}`],
    ['::ffff:10.0.0.1', `a private ${NOT_PUBLIC}`],
    ['::ffff:169.254.169.254', `a link-local ${NOT_PUBLIC}`],
    // IPv4 carried otherwise in IPv6 (NAT64, 6to4): not what ipaddr.js calls unicast either.
    ['64:ff9b::7f00:1', `a NAT64 ${NOT_PUBLIC}`],
    ['2002:7f00:1::1', `a 6to4 ${NOT_PUBLIC}`],
    // IPv4-compatible IPv6 (::/96, deprecated): ipaddr.js calls it unicast, but it names no public host.
    ['::127.0.0.1', `an IPv4-compatible ${NOT_PUBLIC}`],
    ['::a00:1', `an IPv4-compatible ${NOT_PUBLIC}`],
    ['::8.8.8.8', `an IPv4-compatible ${NOT_PUBLIC}`],
    ['0.0.0.0', 'an unspecified address'],
    ['::', 'an unspecified address'],
    ['::ffff:0.0.0.0', 'an unspecified address'],
    ['224.0.0.1', 'a multicast address'],
    ['ff02::1', 'a multicast address'],
    ['255.255.255.255', 'the broadcast address'],
  ]
  it.each(refused)('refuses %s by default: %s', (address, called) => {
    expect(addressRefusal(address, false)).toBe(`${address} is ${called}`)
  })

  it('allows private ranges when the policy does, but never unspecified, multicast or broadcast', () => {
    for (const [address, called] of refused) {
      const never = !called.endsWith(NOT_PUBLIC)
      expect(addressRefusal(address, true), address).toBe(never ? `${address} is ${called}` : undefined)
    }
  })

  it('refuses what is not an address', () => {
    expect(addressRefusal('example.com', true)).toBe('example.com is not an IP address')
  })
})

describe('checkEndpointUrl', () => {
  const ALLOW_PRIVATE =
    '; to deliver inside your own network, start the control plane with WEBHOOK_ALLOW_PRIVATE=true (--webhook-allow-private)'

  it('answers the URL normalised, after resolving its host with {all: true}', async () => {
    const lookup = resolver({ 'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] })
    expect(await checkEndpointUrl('HTTPS://Hooks.Example.COM:443/in?x=1', PUBLIC, lookup)).toBe(
      'https://hooks.example.com/in?x=1',
    )
    expect(lookup.asked).toEqual(['hooks.example.com'])
  })

  it('refuses a host any of whose addresses is refused, naming host and address', async () => {
    const lookup = resolver({ 'mixed.example.com': ['93.184.215.14', '10.0.0.7'] })
    expect(await refusal('https://mixed.example.com/hook', lookup)).toBe(
      `url: mixed.example.com resolves to 10.0.0.7, a private address, not a public one${ALLOW_PRIVATE}`,
    )
  })

  it('refuses a host that does not resolve, or resolves to nothing', async () => {
    expect(await refusal('https://nowhere.example/hook')).toBe('url: nowhere.example does not resolve to an address')
    const empty: HostLookup = async () => []
    expect(await refusal('https://empty.example/hook', empty)).toBe('url: empty.example does not resolve to an address')
  })

  it('judges IP literals without DNS, IPv6 and IPv4 spelt otherwise included', async () => {
    const lookup = resolver({})
    expect(await refusal('http://127.0.0.1:8080/hook', lookup)).toBe(
      `url: 127.0.0.1 is a loopback address, not a public one${ALLOW_PRIVATE}`,
    )
    expect(await refusal('http://[::1]/hook', lookup)).toBe(
      `url: ::1 is a loopback address, not a public one${ALLOW_PRIVATE}`,
    )
    expect(await refusal('http://[::ffff:127.0.0.1]/hook', lookup)).toMatch(/loopback address/)
    expect(await refusal('http://[::127.0.0.1]/hook', lookup)).toMatch(/^url: ::7f00:1 is an IPv4-compatible address/)
    // WHATWG URL reads these as 127.0.0.1.
    expect(await refusal('http://0x7f.1/hook', lookup)).toMatch(/^url: 127\.0\.0\.1 is a loopback/)
    expect(await refusal('http://2130706433/hook', lookup)).toMatch(/^url: 127\.0\.0\.1 is a loopback/)
    expect(await checkEndpointUrl('https://93.184.215.14/hook', PUBLIC, lookup)).toBe('https://93.184.215.14/hook')
    expect(await checkEndpointUrl('https://[2606:4700:4700::1111]/h', PUBLIC, lookup)).toBe(
      'https://[2606:4700:4700::1111]/h',
    )
    expect(lookup.asked).toEqual([])
  })

  it('takes private addresses when the policy allows them, never the unspecified one', async () => {
    const lookup = resolver({ 'billing.internal': ['10.0.0.7'], localhost: ['127.0.0.1', '::1'] })
    expect(await checkEndpointUrl('http://billing.internal/hook', PRIVATE_ALLOWED, lookup)).toBe(
      'http://billing.internal/hook',
    )
    expect(await checkEndpointUrl('http://localhost:3000/hook', PRIVATE_ALLOWED, lookup)).toBe(
      'http://localhost:3000/hook',
    )
    // The refusal says what the address is, and what to set to allow it.
    expect(await refusal('http://localhost:3000/hook', lookup)).toBe(
      'url: localhost resolves to 127.0.0.1, a loopback address, not a public one; to deliver inside your own ' +
        'network, start the control plane with WEBHOOK_ALLOW_PRIVATE=true (--webhook-allow-private)',
    )
    expect(await refusal('http://0.0.0.0/hook', lookup, PRIVATE_ALLOWED)).toBe('url: 0.0.0.0 is an unspecified address')
  })

  it('refuses other schemes, credentials, what is no URL, and URLs over the limit', async () => {
    const lookup = resolver({ 'hooks.example.com': ['93.184.215.14'] })
    expect(await refusal('ftp://hooks.example.com/x', lookup)).toBe('url: must be an http or https URL, not ftp')
    expect(await refusal('file:///etc/passwd', lookup)).toBe('url: must be an http or https URL, not file')
    expect(await refusal('https://user:secret@hooks.example.com/x', lookup)).toMatch(/^url: must not hold credentials/)
    expect(await refusal('https://token@hooks.example.com/x', lookup)).toMatch(/^url: must not hold credentials/)
    expect(await refusal('hooks.example.com/x', lookup)).toBe('url: is not a URL')
    const base = 'https://hooks.example.com/'
    const longest = `${base}${'a'.repeat(MAX_ENDPOINT_URL_LENGTH - base.length)}`
    expect(await checkEndpointUrl(longest, PUBLIC, lookup)).toBe(longest)
    expect(await refusal(`${longest}a`, lookup)).toBe(`url: must be at most ${MAX_ENDPOINT_URL_LENGTH} characters`)
    // None of these got as far as DNS but the one that was accepted.
    expect(lookup.asked).toEqual(['hooks.example.com'])
  })
})
