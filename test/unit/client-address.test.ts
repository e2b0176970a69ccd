import { describe, expect, it } from 'vitest'
import { clientAddressOf, type AddressedRequest } from '../../shared/addresses/client-address.js'
import { normalisedEntry } from '../../shared/addresses/ip-allowlist.js'

const request = (peer: string | undefined, forwardedFor?: string | string[]): AddressedRequest => ({
  socket: { remoteAddress: peer },
  headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
})

const forwarded = (...proxies: string[]) =>
  clientAddressOf({ mode: 'forwarded', trustedProxies: proxies.map((proxy) => normalisedEntry(proxy)!) })

const shown = (address: ReturnType<ReturnType<typeof forwarded>>) => address?.toString()

describe('which address a request is from', () => {
  it('socket: the peer, IPv4-mapped as IPv4; X-Forwarded-For is never read', () => {
    const of = clientAddressOf({ mode: 'socket', trustedProxies: [] })
    expect(shown(of(request('::ffff:127.0.0.1', '10.1.2.3')))).toBe('127.0.0.1')
    expect(shown(of(request('::1')))).toBe('::1')
    expect(shown(of(request('2001:db8::7')))).toBe('2001:db8::7')
    expect(of(request(undefined))).toBeUndefined()
  })

  it('forwarded: from a trusted peer, the rightmost address of X-Forwarded-For that is not a trusted proxy', () => {
    const of = forwarded('127.0.0.1', '10.9.0.0/16')
    expect(shown(of(request('127.0.0.1', '10.1.2.3')))).toBe('10.1.2.3')
    expect(shown(of(request('::ffff:127.0.0.1', '10.1.2.3')))).toBe('10.1.2.3')
    // A client's own spoofed entries sit left of the address the proxy appended: they are never reached.
    expect(shown(of(request('127.0.0.1', '10.0.0.66, 203.0.113.9')))).toBe('203.0.113.9')
    // Trusted proxies in the chain are skipped.
    expect(shown(of(request('127.0.0.1', '203.0.113.9, 10.9.1.1,10.9.2.2')))).toBe('203.0.113.9')
    // Several headers are one list, in order.
    expect(shown(of(request('127.0.0.1', ['203.0.113.9', '10.9.1.1'])))).toBe('203.0.113.9')
    expect(shown(of(request('127.0.0.1', '::ffff:10.1.2.3')))).toBe('10.1.2.3')
    expect(shown(of(request('127.0.0.1', '2001:db8::1')))).toBe('2001:db8::1')
  })

  it('forwarded: every entry trusted names the leftmost; no header (or a blank one) names the peer itself', () => {
    const of = forwarded('127.0.0.1', '10.9.0.0/16')
    expect(shown(of(request('127.0.0.1', '10.9.0.1, 10.9.0.2')))).toBe('10.9.0.1')
    expect(shown(of(request('127.0.0.1')))).toBe('127.0.0.1')
    expect(shown(of(request('127.0.0.1', ' ')))).toBe('127.0.0.1')
  })

  it('forwarded: a peer that is not trusted is the client, whatever its X-Forwarded-For says', () => {
    const of = forwarded('192.0.2.1')
    expect(shown(of(request('127.0.0.1', '10.1.2.3')))).toBe('127.0.0.1')
    expect(shown(of(request('198.51.100.4', '10.1.2.3')))).toBe('198.51.100.4')
  })

  it('forwarded: a malformed entry before the client makes the address unknown, not the proxy', () => {
    const of = forwarded('127.0.0.1')
    for (const header of ['garbage', '10.1.2.3, not-an-ip', '10.1.2.3,', '1.2.3.4:80', '[::1]', '127.1', 'unknown'])
      expect(of(request('127.0.0.1', header)), header).toBeUndefined()
    // Left of the client, a malformed entry is never read.
    expect(shown(of(request('127.0.0.1', 'garbage, 10.1.2.3')))).toBe('10.1.2.3')
  })
})
