import { SocketAddress } from 'node:net'
import { describe, expect, it } from 'vitest'
import { addressAllowed } from '../../shared/addresses/address-rule.js'
import { ApiError } from '../../shared/errors/errors.js'
import {
  allowlistAllows,
  compiledAllowlist,
  normalisedAllowlist,
  normalisedEntry,
  parseClientAddress,
} from '../../shared/addresses/ip-allowlist.js'

const allows = (list: string[], address: string) =>
  allowlistAllows(compiledAllowlist(list.map((entry) => normalisedEntry(entry)!)), parseClientAddress(address))

describe('allow-list entries', () => {
  it('are stored as network/prefix: bare addresses as /32 and /128, host bits cleared, mapped IPv6 as IPv4', () => {
    expect(normalisedEntry('203.0.113.7')).toBe('203.0.113.7/32')
    expect(normalisedEntry('10.1.2.3/8')).toBe('10.0.0.0/8')
    expect(normalisedEntry('0.0.0.0/0')).toBe('0.0.0.0/0')
    expect(normalisedEntry('2001:DB8:0:0::1')).toBe('2001:db8::1/128')
    expect(normalisedEntry('2001:db8::ff/32')).toBe('2001:db8::/32')
    expect(normalisedEntry('::ffff:10.1.2.3')).toBe('10.1.2.3/32')
    expect(normalisedEntry('::ffff:10.0.0.0/104')).toBe('10.0.0.0/8')
    expect(normalisedEntry('::ffff:0:0/95')).toBe('::fffe:0:0/95')
  })

  it('refuse what is not an address or a range, and IPv4 written other than in four decimal parts', () => {
    for (const entry of [
      '',
      'localhost',
      '10.0.0.0/33',
      '::1/129',
      '10.0.0.0/',
      '10.0.0.0/08',
      '10.0.0.0/-1',
      '127.1',
      '0x7f.0.0.1',
      '010.0.0.1',
      '1.2.3.4:80',
      '[::1]',
      'fe80::1%eth0',
      '::ffff:127.1',
      ' 10.0.0.1',
      `${'1'.repeat(60)}::1`,
    ])
      expect(normalisedEntry(entry), entry).toBeUndefined()
  })

  it('are checked as a list: each once, an empty list is none, and a refusal names the entry where the wire put it', () => {
    expect(normalisedAllowlist({ field: 'ipAllowlist', entries: ['10.0.0.1', '10.0.0.1/32', '::1'] })).toEqual([
      '10.0.0.1/32',
      '::1/128',
    ])
    expect(normalisedAllowlist({ field: 'ipAllowlist', entries: [] })).toBeUndefined()
    let error: unknown
    try {
      normalisedAllowlist({ field: 'ipWhitelist', entries: ['10.0.0.1', '10.0.0.0/33'] })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).statusCode).toBe(400)
    expect((error as ApiError).message).toMatch(/^ipWhitelist\.1: "10\.0\.0\.0\/33" is not an IP address or CIDR range/)
  })
})

describe('matching a client address', () => {
  it('matches IPv4 and IPv6 ranges, and an IPv4-mapped client as its IPv4 address', () => {
    expect(allows(['10.0.0.0/8'], '10.255.0.1')).toBe(true)
    expect(allows(['10.0.0.0/8'], '11.0.0.1')).toBe(false)
    expect(allows(['10.0.0.0/8'], '::ffff:10.1.2.3')).toBe(true)
    expect(allows(['::ffff:10.0.0.0/104'], '10.1.2.3')).toBe(true)
    expect(allows(['2001:db8::/32'], '2001:db8:1::5')).toBe(true)
    expect(allows(['2001:db8::/32'], '2001:db9::5')).toBe(false)
    expect(allows(['fe80::/10'], 'fe80::1%eth0')).toBe(true)
    // One family never matches the other's ranges.
    expect(allows(['0.0.0.0/0'], '::1')).toBe(false)
    expect(allows(['::/0'], '127.0.0.1')).toBe(false)
    expect(allows(['127.0.0.1', '::1'], '::1')).toBe(true)
  })

  it('keeps an IPv4-compatible IPv6 address (::/96, which Node shows as ::a.b.c.d) apart from the IPv4 address', () => {
    // ipaddr.js reads `::10.1.2.3` as `::ffff:10.1.2.3`: a peer at ::a01:203 must not pass as 10.1.2.3.
    expect(new SocketAddress({ address: '::a01:203', family: 'ipv6' }).address).toBe('::10.1.2.3')
    expect(parseClientAddress('::10.1.2.3')?.toString()).toBe('::a01:203')
    expect(allows(['10.0.0.0/8'], '::10.1.2.3')).toBe(false)
    expect(allows(['::a01:203'], '::10.1.2.3')).toBe(true)
    expect(normalisedEntry('::10.1.2.3')).toBe('::a01:203/128')
    expect(allows(['::10.0.0.0/104'], '10.1.2.3')).toBe(false)
    expect(normalisedEntry('1:2:3:4:5:6:10.1.2.3')).toBe('1:2:3:4:5:6:a01:203/128')
    // The mapped form, in either notation, is still the IPv4 address.
    expect(parseClientAddress('0:0:0:0:0:ffff:10.1.2.3')?.toString()).toBe('10.1.2.3')
    expect(parseClientAddress('::ffff:a01:203')?.toString()).toBe('10.1.2.3')
  })

  it('takes a zone only on an IPv6 address', () => {
    expect(parseClientAddress('fe80::1%eth0')?.toString()).toBe('fe80::1')
    expect(parseClientAddress('::ffff:10.1.2.3%eth0')?.toString()).toBe('10.1.2.3')
    for (const address of ['10.1.2.3%eth0', '10.1.2.3%', '%eth0'])
      expect(parseClientAddress(address), address).toBeUndefined()
  })

  it('allows no unknown address, and a list whose stored entries are all unreadable allows nothing', () => {
    expect(allowlistAllows(compiledAllowlist(['10.0.0.0/8']), undefined)).toBe(false)
    expect(allowlistAllows(compiledAllowlist(['not a range']), parseClientAddress('10.0.0.1'))).toBe(false)
  })

  it('parses each stored list once, and a list changed by replacement (a new record) afresh', () => {
    const list = ['10.0.0.0/8']
    expect(compiledAllowlist(list)).toBe(compiledAllowlist(list))
    const replaced = ['192.0.2.0/24']
    expect(allowlistAllows(compiledAllowlist(replaced), parseClientAddress('10.0.0.1'))).toBe(false)
    expect(allowlistAllows(compiledAllowlist(replaced), parseClientAddress('192.0.2.9'))).toBe(true)
    // Equal contents, another record: the answer is the contents', whichever was parsed first.
    expect(allowlistAllows(compiledAllowlist(['10.0.0.0/8']), parseClientAddress('10.0.0.1'))).toBe(true)
  })

  it('needs both lists when a key and its api each have one', () => {
    const key = compiledAllowlist(['10.0.0.0/8'])
    const api = compiledAllowlist(['10.1.0.0/16'])
    expect(addressAllowed({ key, api }, parseClientAddress('10.1.2.3'))).toBe(true)
    expect(addressAllowed({ key, api }, parseClientAddress('10.2.0.1'))).toBe(false)
    expect(addressAllowed({ api }, parseClientAddress('10.2.0.1'))).toBe(false)
    expect(addressAllowed({ key }, parseClientAddress('10.2.0.1'))).toBe(true)
    expect(addressAllowed({}, undefined)).toBe(true)
  })
})
